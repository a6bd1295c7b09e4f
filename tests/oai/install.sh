#!/usr/bin/env bash
# What the OAI-PMH acceptance tests (tests/oai.rs) need, installed as root on Debian:
# - xmllint (libxml2-utils), which checks every answer;
# - Debian's python3-gavo package, downloaded (not installed) into target/oai/: the test
#   takes the protocol's XML schemas from it (OAI-PMH.xsd, oai_dc.xsd and the two they
#   import), so that no schema is fetched from the network;
# - the two harvesters of tests/oai/requirements.txt, pinned with their hashes, in the
#   virtualenv target/oai-venv.
# Run from the repository's top directory; running it again changes nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v xmllint >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y libxml2-utils python3-venv
fi
mkdir -p target/oai
if ! compgen -G 'target/oai/python3-gavo_*.deb' >/dev/null; then
    # (Debian's package lists are read first when the download does not find it.)
    (cd target/oai && { apt-get download python3-gavo || { apt-get update && apt-get download python3-gavo; }; })
fi
if [ ! -x target/oai-venv/bin/python ]; then
    python3 -m venv target/oai-venv
fi
target/oai-venv/bin/python -m pip install --quiet --disable-pip-version-check \
    --require-hashes -r tests/oai/requirements.txt
