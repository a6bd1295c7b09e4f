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


class Signpost(signposting.Signpost):
    """signposting 0.9.9 reads a link's `profile` as one string of URIs separated by
    spaces, as a Link header's parameter holds it, and fails on a JSON linkset's, which
    RFC 9264 (section 4.2.4.3) writes as an array: its URIs are handed over as that one
    string, and the parser reads the rest as it is."""

    def __init__(self, rel, target, media_type=None, profiles=None, context=None, link=None):
        if isinstance(profiles, list):
            profiles = " ".join(profiles)
        super().__init__(rel, target, media_type, profiles, context, link)


signposting.linkset.Signpost = Signpost
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
