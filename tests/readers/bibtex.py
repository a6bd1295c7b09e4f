"""Reads the BibTeX on standard input with bibtexparser (1.4) and writes its entries as
JSON, each field as the entry holds it (TeX: `\\&` for `&`, `\\{` for `{`). Its
convert_to_unicode is not used: it reads `\\{c` as a cedilla command."""
import json
import sys

import bibtexparser
from bibtexparser.bparser import BibTexParser

parser = BibTexParser(common_strings=True)
db = bibtexparser.loads(sys.stdin.read(), parser=parser)
if not db.entries:
    sys.exit("no BibTeX entry read")
json.dump(db.entries, sys.stdout, ensure_ascii=False, sort_keys=True)
