#!/bin/sh
# The whole system on this machine, from the repository's root after
# `cargo build --release`: the sample Archive served by `ibi-archive serve` on
# localhost:8080, an `ibi-resolver` on localhost:8090 (resolver/resolver.toml, its registry
# in a temporary directory), the Archive registered and included, and a persistent URL
# followed to the file. Both servers stop when it ends. IBI_BIN_DIR names another
# directory holding both executables (the tests run it on theirs).
set -eu
cd "$(dirname "$0")/.."
bin="${IBI_BIN_DIR:-target/$(rustc -vV | sed -n 's/^host: //p')/release}"
for exe in ibi-archive ibi-resolver; do
    [ -x "$bin/$exe" ] || { echo "demo: $bin/$exe is missing: cargo build --release" >&2; exit 1; }
done
for port in 8080 8090; do
    if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
        echo "demo: something already listens on port $port" >&2
        exit 1
    fi
done

tmp=$(mktemp -d)
pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
cp resolver/resolver.toml "$tmp/"
config="$tmp/resolver.toml"
service=sid.inpe.br/mtc-m18@80/2008/03.17.15.17
file="sample-archive/col/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS 643.0-B-1.pdf"

# --no-inclusion: the Archive is included below by hand, once registered (without it,
# serve would include it in [registration]'s resolver, this one, by itself).
"$bin/ibi-archive" serve --root sample-archive --no-inclusion >"$tmp/archive.log" 2>&1 & pids="$pids $!"
"$bin/ibi-resolver" serve --config "$config" 2>"$tmp/resolver.log" & pids="$pids $!"
for port in 8080 8090; do
    tries=0
    until curl -s -o /dev/null "http://127.0.0.1:$port/"; do
        tries=$((tries + 1))
        if [ "$tries" -gt 100 ]; then
            echo "demo: nothing answers on port $port" >&2
            cat "$tmp/archive.log" "$tmp/resolver.log" >&2
            exit 1
        fi
        sleep 0.1
    done
done

echo "\$ ibi-resolver register $service --email archive-admin@example.org"
sed -n 's/^key *= *"\(.*\)".*/\1/p' sample-archive/archive.toml |
    "$bin/ibi-resolver" register "$service" --email archive-admin@example.org --config "$config"
echo "\$ ibi-archive include --root sample-archive --resolver http://localhost:8090/J8LNKB5R7W/3FUQHC5"
"$bin/ibi-archive" include --root sample-archive --resolver http://localhost:8090/J8LNKB5R7W/3FUQHC5
echo "\$ curl -si http://localhost:8090/8JMKD3MGP8W/35MME4E"
curl -si http://localhost:8090/8JMKD3MGP8W/35MME4E | tr -d '\r' | grep -i -e '^HTTP/' -e '^location:'
echo "\$ curl -sL http://localhost:8090/8JMKD3MGP8W/35MME4E | cmp - \"$file\""
curl -sL http://localhost:8090/8JMKD3MGP8W/35MME4E | cmp - "$file"
echo "the same $(wc -c <"$file") bytes"
