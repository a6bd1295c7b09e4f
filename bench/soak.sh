#!/usr/bin/env bash
# bench/soak.sh [SECONDS] — soak test of the Archive service behind lighttpd.
#
# Builds the release binary, copies sample-archive/ to a temporary directory, starts
# lighttpd on 127.0.0.1 (a free port) with a minimal main configuration that includes
# cgi-bin/lighttpd/ibi-archive.conf unchanged, and runs wrk against it for SECONDS
# (default 600) with a mix of urlRequests: items that are here (by rep and by IBIp, with
# verb lists and file paths), well-formed IBIs that are not here, file-list pages and
# static doc/ files. Then it checks:
#   - no non-2xx answer (wrk's "Non-2xx or 3xx responses" line absent) and no socket error;
#   - lighttpd's resident memory and open files, sampled from /proc at the start (after a
#     warm-up) and every 60 s, do not grow (RSS by at most SOAK_RSS_SLACK_KB, default
#     4096; open files not at all);
#   - a fixed set of requests answers the same bytes (urlkey masked) at the end as at the
#     start;
#   - nothing in the error log (every request of the mix is well-formed).
# Traffic goes to 127.0.0.1 only; the run stops by itself after SECONDS; the server is
# killed by its PID on exit, also on failure. Environment: SOAK_THREADS (2),
# SOAK_CONNECTIONS (8), SOAK_MIX (a file of request paths, one a line, `{service}` for the
# service IBI, in place of the built-in mix), CARGO_TARGET_DIR.
set -euo pipefail

secs="${1:-600}"
threads="${SOAK_THREADS:-2}"
conns="${SOAK_CONNECTIONS:-8}"
rss_slack_kb="${SOAK_RSS_SLACK_KB:-4096}"
case "$secs" in '' | *[!0-9]*) echo "usage: bench/soak.sh [SECONDS]" >&2; exit 2 ;; esac
repo="$(cd "$(dirname "$0")/.." && pwd)"
for tool in lighttpd wrk curl; do
    command -v "$tool" >/dev/null || { echo "soak: $tool is not installed" >&2; exit 2; }
done

echo "soak: building the release binary"
(cd "$repo" && cargo build --release --locked --bin ibi-archive 2>&1 | tail -n 1)
# The output is under <target>/<triple>/release when .cargo/config.toml names a target.
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
triple="$(rustc -vV | sed -n 's/^host: //p')"
bin="$target_dir/$triple/release/ibi-archive"
[ -x "$bin" ] || bin="$target_dir/release/ibi-archive"

work="$(mktemp -d -t ibi-archive-soak.XXXXXX)"
work="$(cd "$work" && pwd -P)" # the Archive root spelled without links
chmod 755 "$work"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

root="$work/archive"
cp -R "$repo/sample-archive" "$root"
rm -rf "$root/var"
mkdir -p "$root/var" "$work/htdocs" "$work/uploads" "$work/bin"
cp "$bin" "$work/bin/ibi-archive"
chmod -R a+rX "$root" "$work/bin" "$work/htdocs"
: >"$work/error.log"
user_lines=""
if [ "$(id -u)" = 0 ]; then
    chown -R www-data: "$root/var" "$work/uploads" "$work/error.log"
    user_lines=$'server.username = "www-data"\nserver.groupname = "www-data"'
fi
service="sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$work/lighttpd.conf" <<EOF
server.document-root = "$work/htdocs"
server.bind = "127.0.0.1"
server.port = $port
server.errorlog = "$work/error.log"
server.upload-dirs = ( "$work/uploads" )
server.max-connections = 1024
$user_lines
server.modules = ( "mod_indexfile", "mod_access", "mod_alias" )
mimetype.assign = ( ".html" => "text/html", ".txt" => "text/plain" )
var.ibi_archive_root = "$root"
var.ibi_archive_service_ibi = "$service"
var.ibi_archive_bin = "$work/bin/ibi-archive"
include "$repo/cgi-bin/lighttpd/ibi-archive.conf"
server.modules += ( "mod_dirlisting", "mod_staticfile" )
EOF
lighttpd -tt -f "$work/lighttpd.conf" >/dev/null
lighttpd -D -f "$work/lighttpd.conf" >"$work/stdio.log" 2>&1 &
server_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 100); do
    curl -fsS -o /dev/null "$base/$service?servicesubject=inclusionConfirmationRequest" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/stdio.log" "$work/error.log" >&2; exit 1; }
    sleep 0.1
done

# The mix: paths for wrk, one a line (SOAK_MIX names a file of others).
s="/$service?servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi="
if [ -n "${SOAK_MIX:-}" ]; then
    sed -e "s|{service}|$service|g" "$SOAK_MIX" >"$work/paths.txt"
else cat >"$work/paths.txt"; fi <<EOF
${s}LK47B6W/362SFKH
${s}8JMKD3MGP8W/35MME4E&parsedibiurl.verblist=GetTranslation(pt)
${s}sid.inpe.br/mtc-m18@80/2009/07.21.14.43&parsedibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)
${s}8JMKD3MGP7W/3EPGUE5
${s}sid.inpe.br/mtc-m19/2014/05.06.07.08
${s}LK47B6W/362SFKH&parsedibiurl.filepath=/reference.bib
${s}LK47B6W/362SFKH&parsedibiurl.verblist=GetFileList
${s}example.org/notHere/2020/01.02.03.04
${s}8JMKD3MGP8W/34PGRBS
${s}sid.inpe.br/mtc-m18@80/2009/07.21.13.24
${s}urlib.net/www/2014/03.25.23.20
${s}8JMKD3MGP8W/3C9EP6P&parsedibiurl.verblist=GetMetadata
/$service/filelist/iconet.com.br/banon/2009/09.09.22.01
/$service?servicesubject=inclusionConfirmationRequest
/col/iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib
/$service
EOF
{
    echo 'local paths = {'
    while IFS= read -r p; do printf '  "%s",\n' "$p"; done <"$work/paths.txt"
    echo '}'
    cat <<'EOF'
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
EOF
} >"$work/mix.lua"

snapshot() { # the answers to the fixed requests, urlkeys masked
    while IFS= read -r p; do
        printf '== %s\n' "$p"
        curl -sS -D - "$base$p" | tr -d '\r' | grep -v -i -E '^(date|etag|last-modified):' |
            sed -E 's/^urlkey [0-9-]+$/urlkey <urlkey>/'
        echo
    done <"$work/paths.txt"
}
sample() { # "<rss kB> <open files>" of the server
    local rss fds
    rss="$(awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status")"
    fds="$(find "/proc/$server_pid/fd" -mindepth 1 -maxdepth 1 | wc -l)"
    echo "$rss $fds"
}

# Warm-up, so that the first sample is after lighttpd's buffers have settled.
wrk -t"$threads" -c"$conns" -d5s -s "$work/mix.lua" "$base" >/dev/null
snapshot >"$work/start.txt"
read -r rss0 fds0 < <(sample)
echo "soak: lighttpd pid $server_pid on $base; start: RSS ${rss0} kB, ${fds0} open files"
echo "soak: wrk -t$threads -c$conns for ${secs}s over $(wc -l <"$work/paths.txt") requests"

wrk -t"$threads" -c"$conns" -d"${secs}s" --timeout 10s --latency -s "$work/mix.lua" "$base" >"$work/wrk.txt" 2>&1 &
wrk_pid=$!
elapsed=0
samples="0s: RSS ${rss0} kB, ${fds0} fds"
while kill -0 "$wrk_pid" 2>/dev/null && [ "$elapsed" -lt $((secs + 60)) ]; do
    sleep 5
    elapsed=$((elapsed + 5))
    if [ $((elapsed % 60)) = 0 ] && kill -0 "$server_pid" 2>/dev/null; then
        read -r r f < <(sample)
        samples="$samples; ${elapsed}s: ${r} kB, ${f} fds"
    fi
done
wait "$wrk_pid" || true
sleep 1 # let the last CGI children exit
read -r rss1 fds1 < <(sample)
snapshot >"$work/end.txt"

cat "$work/wrk.txt"
echo "soak: samples: $samples"
echo "soak: end: RSS ${rss1} kB, ${fds1} open files"
fail=0
if grep -q -E 'Non-2xx or 3xx responses|Socket errors' "$work/wrk.txt"; then
    echo "soak: FAIL: errors in wrk's report" >&2
    fail=1
fi
if ! grep -q -E 'requests in' "$work/wrk.txt"; then
    echo "soak: FAIL: wrk did not report" >&2
    fail=1
fi
if [ "$rss1" -gt $((rss0 + rss_slack_kb)) ]; then
    echo "soak: FAIL: RSS grew from ${rss0} kB to ${rss1} kB" >&2
    fail=1
fi
if [ "$fds1" -gt "$fds0" ]; then
    echo "soak: FAIL: open files grew from ${fds0} to ${fds1}" >&2
    fail=1
fi
if ! diff -u "$work/start.txt" "$work/end.txt" >"$work/answers.diff"; then
    echo "soak: FAIL: the fixed requests answer otherwise at the end:" >&2
    head -n 40 "$work/answers.diff" >&2
    fail=1
fi
errors="$(cat "$work/error.log" "$work/stdio.log" | grep -c -v -E 'server started|server stopped|WARNING: unknown config-key' || true)"
if [ "$errors" != 0 ]; then
    echo "soak: FAIL: $errors lines in the error log:" >&2
    head -n 20 "$work/error.log" "$work/stdio.log" >&2
    fail=1
fi
if [ "$fail" = 0 ]; then
    echo "soak: OK: ${secs}s, no error, RSS ${rss0} -> ${rss1} kB, open files ${fds0} -> ${fds1}, answers unchanged"
fi
exit "$fail"
