"""Reads the Signposting of a URL with the FAIR Signposting parser (`signposting`): its
Link headers (HTTP HEAD), then every linkset they link to, as application/linkset+json
and as application/linkset. Any warning but a tombstone's 410 is an error. Writes JSON:
for the headers and each linkset, the links by relation."""
import json
import sys
import warnings

import signposting
import signposting.linkset

warnings.simplefilter("error")


warnings.filterwarnings("ignore", message="410 Gone")


def described(s):
    uris = lambda signposts: sorted(str(p.target) for p in signposts)
    return {
        "cite-as": str(s.citeAs.target) if s.citeAs else None,
        "describedby": uris(s.describedBy),
        "item": uris(s.items),
        "collection": str(s.collection.target) if s.collection else None,
        "type": uris(s.types),
        "license": str(s.license.target) if s.license else None,
        "author": uris(s.authors),
        "linkset": uris(s.linksets),
        "profiles": sorted(str(p) for s in s.describedBy for p in s.profiles),
    }


url = sys.argv[1]
headers = signposting.find_signposting_http(url)
out = {"headers": described(headers), "linksets": {}}
for linkset in sorted(headers.linksets, key=lambda p: str(p.target)):
    kind = str(linkset.type)
    found = signposting.find_signposting_linkset(str(linkset.target), kind)
    # A linkset holds the links of several anchors: those of the URL asked.
    out["linksets"][kind] = described(found.for_context(url))
json.dump(out, sys.stdout, sort_keys=True)
