#!/usr/bin/env python3
"""An item's editions as a Memento client and a Signposting reader see them, for
resolver/tests/readers.rs: one JSON document on stdout.

    editions.py URI-R TIMEMAP DATETIME...

- for each DATETIME (ISO 8601, UTC): whether URI-R is a TimeGate at that instant
  (memento-client's is_timegate) and the memento its TimeGate chooses
  (get_memento_info: closest, first and last, each URI and datetime);
- the TimeMap at TIMEMAP: its status, media type and links, as memento-client parses them;
- the Signposting of URI-R's redirect (its Link headers, the redirect not followed), as
  the signposting package reads them: cite-as and the linksets with their types; then
  each linkset, followed as the package follows it, its cite-as and item links of the
  anchor LANDING (the item's landing page, whose linkset it is).

    editions.py URI-R TIMEMAP LANDING DATETIME...
"""

import json
import sys
from datetime import datetime

import requests
from memento_client import MementoClient
from signposting import find_signposting_linkset
from signposting.linkheader import find_signposting_http_link


def when(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S") if dt else None


def memento(m):
    return {"uri": m["uri"][0], "datetime": when(m.get("datetime"))}


def main(uri_r, timemap, landing, *datetimes):
    out = {"mementos": [], "timemap": None, "signposting": None}
    # No aggregator: the original is its own TimeGate, which the client finds by its Vary.
    with MementoClient(timegate_uri="") as client:
        for text in datetimes:
            at = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S")
            gate = MementoClient.is_timegate(uri_r, MementoClient.convert_to_http_datetime(at))
            info = client.get_memento_info(uri_r, at)
            found = info.get("mementos", {})
            out["mementos"].append(
                {
                    "at": text,
                    "is_timegate": gate,
                    "timegate_uri": info["timegate_uri"],
                    "original_uri": info["original_uri"],
                    "closest": memento(found["closest"]) if "closest" in found else None,
                    "status": found.get("closest", {}).get("http_status_code"),
                    "first": memento(found["first"]) if "first" in found else None,
                    "last": memento(found["last"]) if "last" in found else None,
                }
            )
    r = requests.get(timemap, timeout=30)
    links = MementoClient.parse_link_header(r.text) or {}
    out["timemap"] = {
        "status": r.status_code,
        "content_type": r.headers.get("Content-Type"),
        "links": {uri: {k: v for k, v in attrs.items()} for uri, attrs in links.items()},
    }
    r = requests.get(uri_r, allow_redirects=False, timeout=30)
    signposts = find_signposting_http_link([r.headers.get("Link", "")], uri_r)
    read = {}
    for s in signposts.linksets:
        found = find_signposting_linkset(str(s.target), str(s.type)).for_context(landing)
        read[str(s.type)] = {
            "cite_as": str(found.citeAs.target) if found.citeAs else None,
            "items": sorted(str(p.target) for p in found.items),
        }
    out["signposting"] = {
        "status": r.status_code,
        "cite_as": str(signposts.citeAs.target) if signposts.citeAs else None,
        "linksets": sorted([str(s.target), str(s.type)] for s in signposts.linksets),
        "read": read,
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(*sys.argv[1:])
