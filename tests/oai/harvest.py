"""Harvest an OAI-PMH repository with a real harvester, as an aggregator would.

    python harvest.py HARVESTER BASE_URL VERB METADATA_PREFIX [FROM]

HARVESTER is sickle, scythe (oaipmh-scythe) or scythe-post (oaipmh-scythe sending its
arguments as a POSTed form), VERB ListRecords or ListIdentifiers. Every
page is followed through its resumption token by the harvester itself. Prints one JSON
line per record, as the harvester gives it: identifier, datestamp, deleted, and metadata
(the XML of the element inside <metadata>, serialised by lxml; null for a deleted record
and for ListIdentifiers). A harvest that matches no record (noRecordsMatch) prints
nothing. Any other error is a traceback and exit status 1.
"""

import json
import sys

OAI = "{http://www.openarchives.org/OAI/2.0/}"


def metadata_of(record_xml):
    from lxml import etree

    metadata = record_xml.find(OAI + "metadata")
    if metadata is None:
        return None
    children = [c for c in metadata if isinstance(c.tag, str)]
    if len(children) != 1:
        raise SystemExit("a <metadata> holds %d elements" % len(children))
    return etree.tostring(children[0], encoding="unicode", with_tail=False)


def line(header, record_xml):
    print(
        json.dumps(
            {
                "identifier": header.identifier,
                "datestamp": header.datestamp,
                "deleted": bool(header.deleted),
                "metadata": None if record_xml is None else metadata_of(record_xml),
            }
        )
    )


def with_sickle(base, verb, prefix, from_):
    from sickle import Sickle
    from sickle.oaiexceptions import NoRecordsMatch

    client = Sickle(base, max_retries=0, timeout=30)
    args = {"metadataPrefix": prefix}
    if from_:
        args["from"] = from_
    try:
        if verb == "ListRecords":
            for record in client.ListRecords(**args):
                line(record.header, record.xml)
        else:
            for header in client.ListIdentifiers(**args):
                line(header, None)
    except NoRecordsMatch:
        pass


def with_scythe(base, verb, prefix, from_, method="GET"):
    from oaipmh_scythe import HTTPConfig, Scythe
    from oaipmh_scythe.exceptions import NoRecordsMatch

    with Scythe(base, http_config=HTTPConfig(http_method=method, timeout=30)) as client:
        try:
            if verb == "ListRecords":
                for record in client.list_records(from_=from_, metadata_prefix=prefix):
                    line(record.header, record.xml)
            else:
                for header in client.list_identifiers(from_=from_, metadata_prefix=prefix):
                    line(header, None)
        except NoRecordsMatch:
            pass


def main(argv):
    if len(argv) not in (5, 6) or argv[3] not in ("ListRecords", "ListIdentifiers"):
        raise SystemExit(__doc__)
    harvester, base, verb, prefix = argv[1:5]
    from_ = argv[5] if len(argv) == 6 else None
    harvest = {
        "sickle": with_sickle,
        "scythe": with_scythe,
        "scythe-post": lambda *a: with_scythe(*a, method="POST"),
    }.get(harvester)
    if harvest is None:
        raise SystemExit("no harvester %r: sickle, scythe or scythe-post" % harvester)
    harvest(base, verb, prefix, from_)


if __name__ == "__main__":
    main(sys.argv)
