#!/usr/bin/env bash
# A doc/ file through `ibi-archive serve`, one or more builds of it side by side, beside
# lighttpd's static file of the same size, all started once and measured in turn:
#
#   bench/serve_files.sh [--rounds 7] [--duration 5] [--connections 8] BIN [BIN...]
#
# Each round runs `wrk -t2 -c<connections> -d<duration>s` against lighttpd's copy of the
# file, then against the same doc/ file through each BIN's `serve` (default limits, its
# log on a file); the last lines give each server's median req/s and its ratio to
# lighttpd's within each round, and their median. On a machine shared with other work the
# rate of every server moves from round to round: the ratio within a round holds better,
# and the load average is printed with each round.
#
# The Archive is bench/run.sh's of 1,000 items (made by `bench/run.sh --servers serve
# --items 1000 --skip-process --skip-criterion`); its DOC_PATH is the file. Only 127.0.0.1
# is used; every server started is stopped by its process group on exit.
set -euo pipefail

ROUNDS=7
DURATION=5
CONNECTIONS=8
BINS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift 2 ;;
        --duration) DURATION="$2"; shift 2 ;;
        --connections) CONNECTIONS="$2"; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        -*) echo "serve_files.sh: unknown argument $1" >&2; exit 2 ;;
        *) BINS+=("$(realpath "$1")"); shift ;;
    esac
done
[ "${#BINS[@]}" -gt 0 ] || { echo "serve_files.sh: give at least one ibi-archive executable" >&2; exit 2; }
for tool in wrk curl lighttpd python3; do
    command -v "$tool" >/dev/null || { echo "serve_files.sh: $tool is needed" >&2; exit 1; }
done

REPO="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/httpd.sh source-path=SCRIPTDIR disable=SC1091
. "$REPO/bench/lib/httpd.sh"
TARGET="${CARGO_TARGET_DIR:-$REPO/target}"
GEN_VERSION="$(sed -n 's/^pub const GENERATOR_VERSION: u32 = \([0-9]*\);/\1/p' "$REPO/bench/archive_gen.rs")"
ROOT="$TARGET/bench-archives/archive-v$GEN_VERSION-n1000-s1"
[ -s "$ROOT.samples.env" ] || {
    echo "serve_files.sh: no Archive at $ROOT: run bench/run.sh --servers serve --items 1000 --skip-process --skip-criterion first" >&2
    exit 1
}
# shellcheck disable=SC1090,SC1091
. "$ROOT.samples.env"

WORK="$(mktemp -d -t ibi-serve-files.XXXXXX)"
chmod 755 "$WORK"
mkdir -p "$WORK/htdocs" "$WORK/uploads"
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    sleep 0.3
    for pid in "${PIDS[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
python3 -c 'import os, shutil, sys, urllib.parse
shutil.copyfile(os.fsencode(sys.argv[1]) + urllib.parse.unquote_to_bytes(sys.argv[2]), sys.argv[3])' \
    "$ROOT" "$DOC_PATH" "$WORK/htdocs/same-size"
chmod -R a+rX "$WORK"
: >"$WORK/error.log"
site=(--dir "$WORK" --port "$(port)" --root "$ROOT" --bin /bin/true --service-ibi "$SERVICE_IBI")
if [ "$(id -u)" = 0 ] && id www-data >/dev/null 2>&1; then
    chown www-data:www-data "$WORK/error.log" "$WORK/uploads"
    site+=(--user www-data)
fi
lighttpd_config "${site[@]}" >"$WORK/lighttpd.conf"
setsid lighttpd -D -f "$WORK/lighttpd.conf" </dev/null >"$WORK/lighttpd.out" 2>&1 &
PIDS+=($!)
URLS=("http://127.0.0.1:${site[3]}/same-size")
NAMES=(lighttpd)
i=0
for bin in "${BINS[@]}"; do
    p="$(port)"
    setsid "$bin" serve --root "$ROOT" --listen "127.0.0.1:$p" --no-inclusion \
        </dev/null >"$WORK/serve-$i.log" 2>&1 &
    PIDS+=($!)
    URLS+=("http://127.0.0.1:$p$DOC_PATH")
    NAMES+=("serve-$i")
    echo "serve-$i: $bin"
    i=$((i + 1))
done
for u in "${URLS[@]}"; do
    for _ in $(seq 1 100); do curl -sf -o /dev/null "$u" && break; sleep 0.05; done
    curl -sf -o /dev/null "$u" || { echo "serve_files.sh: $u does not answer" >&2; exit 1; }
done

RESULTS="$WORK/results"
: >"$RESULTS"
for r in $(seq 1 "$ROUNDS"); do
    line="round $r, load $(cut -d' ' -f1 /proc/loadavg):"
    for k in "${!URLS[@]}"; do
        rps="$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" "${URLS[$k]}" | awk '/Requests\/sec/{print $2}')"
        echo "$r ${NAMES[$k]} $rps" >>"$RESULTS"
        line="$line ${NAMES[$k]} $rps"
    done
    echo "$line"
done
python3 - "$RESULTS" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r, name, rps = line.split()
    rows.setdefault(name, {})[int(r)] = float(rps)
base = rows["lighttpd"]
for name, by_round in rows.items():
    ratios = [by_round[r] / base[r] for r in sorted(by_round)]
    print(f"{name}: median {statistics.median(by_round.values()):.0f} req/s; "
          f"÷ lighttpd per round {' '.join(f'{x:.2f}' for x in ratios)}; "
          f"median {statistics.median(ratios):.2f}")
PY
