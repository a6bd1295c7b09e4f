#!/usr/bin/env python3
"""The harvester of bench/oai.sh: one OAI-PMH list (ListRecords or ListIdentifiers),
following resumption tokens to its end (or for --pages pages), timing each page from the
request sent to the last byte of its answer (a new connection per page, as a harvester's
urlopen makes). Prints one JSON object: pages, records, deleted, seconds, each page's
milliseconds, the first completeListSize, and whether every answer was 200, well-formed
and free of <error>.

    oai_harvest.py BASE_URL [--verb ListRecords] [--prefix oai_dc] [--from DATE] [--pages N]
"""
import argparse
import json
import sys
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

OAI = "{http://www.openarchives.org/OAI/2.0/}"


def fetch(url):
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as answer:
        status = answer.status
        body = answer.read()
    return status, body, (time.perf_counter() - start) * 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("--verb", default="ListRecords")
    ap.add_argument("--prefix", default="oai_dc")
    ap.add_argument("--from", dest="from_", default=None)
    ap.add_argument("--pages", type=int, default=0, help="stop after N pages (0: all)")
    args = ap.parse_args()

    query = {"verb": args.verb, "metadataPrefix": args.prefix}
    if args.from_:
        query["from"] = args.from_
    url = args.base + "?" + urllib.parse.urlencode(query)
    item = "record" if args.verb == "ListRecords" else "header"
    pages, records, deleted, page_ms = 0, 0, 0, []
    complete_size, failure = None, None
    started = time.perf_counter()
    while True:
        status, body, ms = fetch(url)
        pages += 1
        page_ms.append(ms)
        if status != 200:
            failure = f"page {pages}: status {status}"
            break
        try:
            root = ET.fromstring(body)
        except ET.ParseError as e:
            failure = f"page {pages}: not well-formed: {e}"
            break
        error = root.find(OAI + "error")
        if error is not None:
            failure = f"page {pages}: error {error.get('code')}: {error.text}"
            break
        listing = root.find(OAI + args.verb)
        for el in listing.iter(OAI + item):
            records += 1
            header = el if item == "header" else el.find(OAI + "header")
            if header.get("status") == "deleted":
                deleted += 1
        token = listing.find(OAI + "resumptionToken")
        if complete_size is None and token is not None:
            complete_size = token.get("completeListSize")
        if token is None or not (token.text or "").strip():
            break
        if args.pages and pages >= args.pages:
            break
        url = args.base + "?" + urllib.parse.urlencode(
            {"verb": args.verb, "resumptionToken": token.text.strip()}
        )
    json.dump(
        {
            "pages": pages,
            "records": records,
            "deleted": deleted,
            "seconds": time.perf_counter() - started,
            "page_ms": page_ms,
            "complete_list_size": complete_size,
            "failure": failure,
        },
        sys.stdout,
    )
    print()
    return 1 if failure else 0


if __name__ == "__main__":
    sys.exit(main())
