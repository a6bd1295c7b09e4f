"""Fetches an HTML page and writes the schema.org JSON-LD extruct finds in it."""
import json
import sys

import extruct
import requests

page = requests.get(sys.argv[1], headers={"Accept": "text/html"})
found = extruct.extract(page.text, base_url=page.url, syntaxes=["json-ld"], errors="strict")
json.dump({"status": page.status_code, "json-ld": found["json-ld"]}, sys.stdout,
          ensure_ascii=False, sort_keys=True)
