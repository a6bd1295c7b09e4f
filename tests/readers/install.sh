#!/usr/bin/env bash
# What the readers' acceptance tests need: the clients of tests/readers/requirements.txt
# (a BibTeX, a RIS and a CSL reader, a Memento client, a Signposting parser and a
# structured-data extractor), pinned with their hashes, in the virtualenv
# target/readers-venv. Run from anywhere; running it again changes nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y python3-venv
fi
if [ ! -x target/readers-venv/bin/python ]; then
    python3 -m venv target/readers-venv
fi
target/readers-venv/bin/python -m pip install --quiet --disable-pip-version-check \
    --require-hashes -r tests/readers/requirements.txt
