"""Reads the RIS on standard input with rispy and writes its records as JSON."""
import json
import sys

import rispy

records = rispy.loads(sys.stdin.read())
if not records:
    sys.exit("no RIS record read")
json.dump(records, sys.stdout, ensure_ascii=False, sort_keys=True)
