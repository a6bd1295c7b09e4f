#!/usr/bin/env bash
# Whole-process benchmarks of the Archive service, each figure beside the CGI floor
# measured in the same run. Writes a markdown report (see BENCHMARKS.md).
#
#   bench/run.sh [--items 100000,1000000] [--process-items 1000,100000,1000000]
#                [--duration 10] [--runs 3] [--out FILE] [--skip-criterion]
#                [--skip-servers] [--skip-process] [--servers lighttpd,apache2,serve]
#                [--bin FILE] [--cgi-bin FILE]
#
# What it does:
#  1. builds ibi-archive and ibi-archive-cgi (release, as configured in
#     .cargo/config.toml): the CGI rows and the web servers run ibi-archive-cgi, as
#     cgi-bin/ names it, the administrator's commands (prefixes, describe) and `serve`
#     ibi-archive. --bin FILE measures that executable instead (a build of another
#     commit, say), for both unless --cgi-bin FILE gives the CGI program; the gen-archive
#     example (when an Archive must be made), the C floor (bench/floor.c, gcc -O2
#     -static) and the Rust floor (bench/floor.rs, built like the product);
#  2. generates the Archives it needs (cached in <target>/bench-archives/, shared with
#     `cargo bench`);
#  3. process start: `hyperfine -N` of the CGI with its environment set (no server) for
#     six requests, beside both floors; instruction counts (callgrind), peak RSS and page
#     faults (/usr/bin/time -v) of one run;
#  4. servers: lighttpd (mod_cgi) and Apache (event MPM, mod_cgid) on 127.0.0.1, each
#     configured with the repository's cgi-bin/ snippet included unchanged from a
#     generated main configuration (bench/lib/httpd.sh, the generator the tests and
#     resolver.sh use; Apache with 2 children of 16 threads); `wrk -t2 -c8 -d<D> --latency`
#     for hits and misses by rep and by IBIp and a doc/ file (answered by the program),
#     beside the floor (the same server and configuration with the C floor as the
#     executable) and the server's static-file rate (a file of its document root, the
#     ceiling). The server is restarted before every measurement;
#     every figure is the median of --runs runs, interleaved;
#     `serve` (not among the defaults): the same doc/ file through `ibi-archive serve`
#     over the same Archive (default limits, its log on a file), beside lighttpd's static
#     file of the same size (a copy of that doc/ file in lighttpd's document root), the
#     two interleaved in one run: its "× floor" is ÷ that static file;
#  5. in-process: `cargo bench --bench handler` medians (criterion), unless skipped.
#
# Every server started is stopped by its PID (and its process group) on exit, failure
# included. Only 127.0.0.1 is used. Run as root (the servers then run their workers as
# www-data) or as a user that may run apache2/lighttpd.
set -euo pipefail

SIZES="100000,1000000"
PROCESS_ITEMS="1000,100000,1000000"
DURATION=10
RUNS=3
OUT=""
SKIP_CRITERION=0
SKIP_SERVERS=0
SKIP_PROCESS=0
SERVERS="lighttpd,apache2"
GIVEN_BIN=""
GIVEN_CGI_BIN=""
while [ $# -gt 0 ]; do
    case "$1" in
        --items) SIZES="$2"; shift 2 ;;
        --process-items) PROCESS_ITEMS="$2"; shift 2 ;;
        --duration) DURATION="$2"; shift 2 ;;
        --runs) RUNS="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --servers) SERVERS="$2"; shift 2 ;;
        --skip-criterion) SKIP_CRITERION=1; shift ;;
        --skip-servers) SKIP_SERVERS=1; shift ;;
        --skip-process) SKIP_PROCESS=1; shift ;;
        --bin) GIVEN_BIN="$2"; shift 2 ;;
        --cgi-bin) GIVEN_CGI_BIN="$2"; shift 2 ;;
        -h|--help) sed -n '2,41p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
umask 022
# lighttpd_config, apache2_config: the servers' generated main configurations (shared
# with the tests and resolver.sh).
# shellcheck source=lib/httpd.sh source-path=SCRIPTDIR disable=SC1091
. "$REPO/bench/lib/httpd.sh"
TARGET="${CARGO_TARGET_DIR:-$REPO/target}"
case "$TARGET" in /*) ;; *) TARGET="$REPO/$TARGET" ;; esac
CACHE="$TARGET/bench-archives"
OUT="${OUT:-$TARGET/bench-results.md}"
mkdir -p "$CACHE"

for tool in cargo gcc rustc hyperfine wrk curl python3; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is needed" >&2; exit 1; }
done

WORK="$(mktemp -d -t ibi-bench.XXXXXX)"
chmod 755 "$WORK"
SERVER_PIDS=()

stop_server() {
    local pid="$1"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    # Workers, the cgid daemon or CGI processes left in its process group.
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local pid
    for pid in "${SERVER_PIDS[@]}"; do
        stop_server "$pid"
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "run.sh: $*" >&2; }

# --- 1. build -------------------------------------------------------------------------
BUILD_JSON="$WORK/build.json"
build() { # cargo build arguments -> the artifacts' messages in $BUILD_JSON
    log "building $* (release)"
    cargo build --release "$@" --message-format=json-render-diagnostics >"$BUILD_JSON"
}
executable() {
    python3 - "$BUILD_JSON" "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == sys.argv[2] and m.get("executable"):
        print(m["executable"])
PY
}
mkdir -p "$WORK/bin"
GEN=""
if [ -n "$GIVEN_BIN" ]; then
    cp "$GIVEN_BIN" "$WORK/bin/ibi-archive"
    cp "${GIVEN_CGI_BIN:-$GIVEN_BIN}" "$WORK/bin/ibi-archive-cgi"
else
    build --bin ibi-archive --bin ibi-archive-cgi --example gen-archive
    cp "$(executable ibi-archive)" "$WORK/bin/ibi-archive"
    cp "$(executable ibi-archive-cgi)" "$WORK/bin/ibi-archive-cgi"
    GEN="$(executable gen-archive)"
fi
gcc -O2 -static -o "$WORK/bin/floor-c" bench/floor.c
RUST_FLOOR_FLAGS=(-O -C panic=abort)
if [ "$(uname -m)" = x86_64 ]; then
    RUST_FLOOR_FLAGS+=(-C target-feature=+crt-static -C relocation-model=static)
fi
rustc "${RUST_FLOOR_FLAGS[@]}" -o "$WORK/bin/floor-rust" bench/floor.rs
chmod 755 "$WORK/bin"/*
BIN="$WORK/bin/ibi-archive"
CGI_BIN="$WORK/bin/ibi-archive-cgi"

# --- 2. archives ----------------------------------------------------------------------
# The cache name, shared with benches/handler.rs: it changes with the generator.
GEN_VERSION="$(sed -n 's/^pub const GENERATOR_VERSION: u32 = \([0-9]*\);/\1/p' bench/archive_gen.rs)"
WWW_IDS=""
if [ "$(id -u)" = 0 ] && id www-data >/dev/null 2>&1; then
    WWW_IDS="www-data:www-data"
fi
archive() { # N -> prints the root; generates it when missing
    local n="$1" root="$CACHE/archive-v$GEN_VERSION-n$1-s1"
    if [ ! -s "$root.samples.env" ]; then
        rm -rf "$root"
        if [ -z "$GEN" ]; then
            build --example gen-archive
            GEN="$(executable gen-archive)"
        fi
        log "generating $n items into $root"
        "$GEN" --root "$root" --items "$n" >/dev/null
    fi
    mkdir -p "$root/var"
    # var/col-prefixes, as an administrator keeps it (the service only reads it).
    "$BIN" prefixes --root "$root" >/dev/null
    # The servers run the CGI as www-data: it must reach the tree and write var/.
    if [ -n "$WWW_IDS" ]; then
        chown -R "$WWW_IDS" "$root/var"
        local d="$root"
        while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null || true; d="$(dirname "$d")"; done
    fi
    echo "$root"
}
load_samples() { # root -> sets SERVICE_IBI HIT_REP ... (and ITEMS) from root.samples.env
    # shellcheck disable=SC1090
    . "$1.samples.env"
}

machine() {
    echo "- machine: $(nproc) CPUs, $(uname -r), $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
    echo "- $(rustc -V); $(lighttpd -v 2>/dev/null | head -1 | cut -d' ' -f1); $(apache2 -v 2>/dev/null | head -1 | sed 's/Server version: //'); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2); $(hyperfine --version)"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
}

{
    echo "# ibi-archive benchmarks, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    machine
    echo "- binary: $(stat -c %s "$BIN") bytes, $(file -b "$BIN" | cut -d, -f1-2,4 | tr -s ' ')"
    echo "- CGI program: $(stat -c %s "$CGI_BIN") bytes"
    echo
} >"$OUT"

query() { # ibi [verbs] -> query string
    local q="servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi=$1"
    [ -n "${2:-}" ] && q="$q&parsedibiurl.verblist=$2"
    echo "$q"
}
VERBS="GetLastEdition+GetMetadata(oai_dc)"

median() { python3 -c 'import sys,statistics; v=[float(x) for x in sys.argv[1:]]; print(statistics.median(v))' "$@"; }

# --- 3. process start -----------------------------------------------------------------
if [ "$SKIP_PROCESS" = 0 ]; then
    {
        echo "## Process start (no server): hyperfine -N, median of $RUNS rounds of 300 runs"
        echo
        echo "Each row beside the floors measured in the same round. Instructions: callgrind,"
        echo "whole process (load-independent). RSS: peak, /usr/bin/time -v."
        echo
        echo "| N | request | median µs | × C floor | × Rust floor | instructions | peak RSS KiB | minor faults |"
        echo "|---|---|---|---|---|---|---|---|"
    } >>"$OUT"
    IFS=, read -r -a PNS <<<"$PROCESS_ITEMS"
    for n in "${PNS[@]}"; do
        root="$(archive "$n")"
        load_samples "$root"
        names=(floor-c floor-rust hit_rep hit_ibip miss_rep miss_ibip filtered_chain describe)
        qs=("" "" "$(query "$HIT_REP")" "$(query "$HIT_IBIP")" "$(query "$MISS_REP")" \
            "$(query "$MISS_IBIP")" "$(query "$CHAIN_HEAD" "$VERBS")" "")
        declare -A med=()
        # The environment and command line of each row (describe is the administrator's
        # command: no GATEWAY_INTERFACE).
        row_cmd() { # index -> sets envs cmd
            local name="${names[$1]}"
            envs=(env -i PATH=/usr/bin:/bin GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET
                SERVER_PROTOCOL=HTTP/1.1 REMOTE_ADDR=127.0.0.1 SCRIPT_NAME="/$SERVICE_IBI"
                IBI_ARCHIVE_ROOT="$root" QUERY_STRING="${qs[$1]}")
            case "$name" in
                floor-c) cmd=("$WORK/bin/floor-c") ;;
                floor-rust) cmd=("$WORK/bin/floor-rust") ;;
                describe)
                    envs=(env -i PATH=/usr/bin:/bin)
                    cmd=("$BIN" describe --root "$root" "$CHAIN_HEAD")
                    ;;
                *) cmd=("$CGI_BIN") ;;
            esac
        }
        for round in $(seq 1 "$RUNS"); do
            for i in "${!names[@]}"; do
                name="${names[$i]}"
                row_cmd "$i"
                "${envs[@]}" hyperfine -N -w 30 -r 300 --export-json "$WORK/h.json" -- "${cmd[*]}" \
                    >/dev/null 2>&1 || { log "hyperfine failed for $name"; exit 1; }
                m="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["median"]*1e6)' "$WORK/h.json")"
                med[$name]="${med[$name]:-} $m"
            done
        done
        fc="$(median ${med[floor-c]})"
        fr="$(median ${med[floor-rust]})"
        for i in "${!names[@]}"; do
            name="${names[$i]}"
            mm="$(median ${med[$name]})"
            row_cmd "$i"
            ins="-"
            if command -v valgrind >/dev/null; then
                ins="$("${envs[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "${cmd[@]}" 2>&1 >/dev/null \
                    | awk '/refs:/{gsub(",","",$NF); print $NF}')"
            fi
            tv="$("${envs[@]}" /usr/bin/time -v "${cmd[@]}" 2>&1 >/dev/null)"
            rss="$(echo "$tv" | awk -F': ' '/Maximum resident/{print $2}')"
            flt="$(echo "$tv" | awk -F': ' '/Minor \(reclaiming/{print $2}')"
            printf '| %s | %s | %.0f | %.2f | %.2f | %s | %s | %s |\n' "$n" "$name" "$mm" \
                "$(python3 -c "print($mm/$fc)")" "$(python3 -c "print($mm/$fr)")" "$ins" "$rss" "$flt" >>"$OUT"
        done
        unset med
    done
    echo >>"$OUT"
fi

# --- 4. servers -----------------------------------------------------------------------
start_server() { # kind root bin service_ibi -> sets SERVER_PID SERVER_PORT SERVER_DIR
    local kind="$1" root="$2" bin="$3" ibi="$4"
    SERVER_DIR="$(mktemp -d "$WORK/$kind.XXXXXX")"
    chmod 755 "$SERVER_DIR"
    mkdir -p "$SERVER_DIR/htdocs" "$SERVER_DIR/uploads"
    echo "bench server" >"$SERVER_DIR/htdocs/index.html"
    # A copy of the doc/ file asked for, for a static file of the same size.
    python3 -c 'import os, shutil, sys, urllib.parse
shutil.copyfile(os.fsencode(sys.argv[1]) + urllib.parse.unquote_to_bytes(sys.argv[2]), sys.argv[3])' \
        "$root" "$DOC_PATH" "$SERVER_DIR/htdocs/$DOC_COPY"
    chmod -R a+rX "$SERVER_DIR"
    : >"$SERVER_DIR/error.log"
    if [ -n "$WWW_IDS" ]; then chown "$WWW_IDS" "$SERVER_DIR/error.log" "$SERVER_DIR/uploads"; fi
    SERVER_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    local site=(--dir "$SERVER_DIR" --port "$SERVER_PORT" --root "$root" --bin "$bin" --service-ibi "$ibi")
    if [ -n "$WWW_IDS" ]; then site+=(--user www-data); fi
    case "$kind" in
        apache2)
            apache2_config "${site[@]}" --threads 16 --start-servers 2 >"$SERVER_DIR/apache2.conf"
            setsid "$APACHE2_BIN" -f "$SERVER_DIR/apache2.conf" -DFOREGROUND \
                </dev/null >>"$SERVER_DIR/stdio.log" 2>&1 &
            ;;
        lighttpd)
            lighttpd_config "${site[@]}" >"$SERVER_DIR/lighttpd.conf"
            setsid "$LIGHTTPD_BIN" -D -f "$SERVER_DIR/lighttpd.conf" \
                </dev/null >>"$SERVER_DIR/stdio.log" 2>&1 &
            ;;
        serve)
            # Default limits, as an administrator runs it; its line per request goes to
            # a file, as an administrator's would.
            setsid "$bin" serve --root "$root" --listen "127.0.0.1:$SERVER_PORT" --no-inclusion \
                </dev/null >>"$SERVER_DIR/stdio.log" 2>&1 &
            ;;
    esac
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    for _ in $(seq 1 200); do
        if curl -s -o /dev/null "http://127.0.0.1:$SERVER_PORT/"; then return 0; fi
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    log "$kind did not start:"; cat "$SERVER_DIR/error.log" "$SERVER_DIR/stdio.log" >&2
    exit 1
}
stop_current() {
    stop_server "$SERVER_PID"
    local keep=() p
    for p in "${SERVER_PIDS[@]}"; do [ "$p" = "$SERVER_PID" ] || keep+=("$p"); done
    SERVER_PIDS=("${keep[@]+"${keep[@]}"}")
}

to_us() { # wrk latency ("812.00us", "1.20ms", "2.01s") -> µs
    python3 -c '
import re,sys
m=re.match(r"([0-9.]+)(us|ms|s)$", sys.argv[1]); v=float(m.group(1))
print(v*{"us":1,"ms":1e3,"s":1e6}[m.group(2)])' "$1"
}

wrk_once() { # url -> "rps p50us p99us"
    local outp
    outp="$(wrk -t2 -c8 -d"${DURATION}s" --latency "$1")"
    local rps p50 p99
    rps="$(echo "$outp" | awk '/Requests\/sec/{print $2}')"
    p50="$(to_us "$(echo "$outp" | awk '$1=="50%"{print $2}')")"
    p99="$(to_us "$(echo "$outp" | awk '$1=="99%"{print $2}')")"
    if echo "$outp" | grep -q "Non-2xx"; then log "non-2xx answers for $1"; echo "$outp" >&2; exit 1; fi
    echo "$rps $p50 $p99"
}

check_answer() { # url expect(hit|miss|floor|static)
    local body status
    status="$(curl -s -o "$WORK/body" -w '%{http_code}' "$1")"
    body="$(cat "$WORK/body")"
    [ "$status" = 200 ] || { log "$1 answered $status: $body"; exit 1; }
    case "$2" in
        hit) echo "$body" | grep -q '^url' || { log "$1 is not a hit: $body"; exit 1; } ;;
        miss) [ -z "$body" ] || { log "$1 is not a miss: $body"; exit 1; } ;;
        floor) [ "$body" = "confirmation yes" ] || { log "$1 is not the floor: $body"; exit 1; } ;;
    esac
}

if [ "$SKIP_SERVERS" = 0 ]; then
    IFS=, read -r -a SNS <<<"$SIZES"
    IFS=, read -r -a KINDS <<<"$SERVERS"
    {
        echo "## Under a web server: wrk -t2 -c8 -d${DURATION}s --latency, median of $RUNS runs"
        echo
        echo "Restarted before every measurement; runs interleaved. floor = the same server and"
        echo "configuration (cgi-bin/ snippet) with the C floor as the executable; file = a"
        echo "doc/ file of the Archive (answered by the program: it decides what may be served);"
        echo "static = a file of the server's own document root (the ceiling). serve's file ="
        echo "that doc/ file through \`ibi-archive serve\` (default limits), its × being ÷"
        echo "static_same: lighttpd's static file of the same size (a copy of it in lighttpd's"
        echo "document root), measured in the same run."
        echo
        echo "| server | N | request | req/s | × floor | p50 µs | p99 µs | load avg |"
        echo "|---|---|---|---|---|---|---|---|"
    } >>"$OUT"
    for kind in "${KINDS[@]}"; do
        for n in "${SNS[@]}"; do
            root="$(archive "$n")"
            load_samples "$root"
            DOC_COPY="same-size.${DOC_PATH##*.}"
            # The secret for urlkeys, as the first hit would make it (owned by www-data).
            env -i GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET IBI_ARCHIVE_ROOT="$root" \
                QUERY_STRING="$(query "$HIT_REP")" "$CGI_BIN" >/dev/null
            if [ -n "$WWW_IDS" ]; then chown -R "$WWW_IDS" "$root/var"; fi
            cases=(floor hit_rep hit_ibip miss_rep miss_ibip file static)
            # serve: its doc/ file beside lighttpd's static file of that size (the floor
            # of its ratio).
            ref=floor
            [ "$kind" = serve ] && { cases=(static_same file); ref=static_same; }
            declare -A R=()
            for run in $(seq 1 "$RUNS"); do
                for c in "${cases[@]}"; do
                    bin="$CGI_BIN"; [ "$c" = floor ] && bin="$WORK/bin/floor-c"
                    [ "$kind" = serve ] && bin="$BIN"
                    server="$kind"; [ "$c" = static_same ] && server=lighttpd
                    start_server "$server" "$root" "$bin" "$SERVICE_IBI"
                    base="http://127.0.0.1:$SERVER_PORT"
                    case "$c" in
                        floor) url="$base/$SERVICE_IBI?$(query "$HIT_REP")"; expect=floor ;;
                        hit_rep) url="$base/$SERVICE_IBI?$(query "$HIT_REP")"; expect=hit ;;
                        hit_ibip) url="$base/$SERVICE_IBI?$(query "$HIT_IBIP")"; expect=hit ;;
                        miss_rep) url="$base/$SERVICE_IBI?$(query "$MISS_REP")"; expect=miss ;;
                        miss_ibip) url="$base/$SERVICE_IBI?$(query "$MISS_IBIP")"; expect=miss ;;
                        file) url="$base$DOC_PATH"; expect=static ;;
                        static) url="$base/index.html"; expect=static ;;
                        static_same) url="$base/$DOC_COPY"; expect=static ;;
                    esac
                    check_answer "$url" "$expect"
                    la="$(cut -d' ' -f1 /proc/loadavg)"
                    read -r rps p50 p99 <<<"$(wrk_once "$url")"
                    log "$server N=$n run $run $c: $rps req/s p50 $p50 µs p99 $p99 µs (load $la)"
                    R[$c]="${R[$c]:-} $rps/$p50/$p99/$la"
                    stop_current
                done
            done
            fl="$(median $(for x in ${R[$ref]}; do echo "${x%%/*}"; done))"
            for c in "${cases[@]}"; do
                vals=(${R[$c]})
                rps="$(median $(for x in "${vals[@]}"; do echo "$x" | cut -d/ -f1; done))"
                p50="$(median $(for x in "${vals[@]}"; do echo "$x" | cut -d/ -f2; done))"
                p99="$(median $(for x in "${vals[@]}"; do echo "$x" | cut -d/ -f3; done))"
                la="$(median $(for x in "${vals[@]}"; do echo "$x" | cut -d/ -f4; done))"
                server="$kind"; [ "$c" = static_same ] && server=lighttpd
                printf '| %s | %s | %s | %.0f | %.2f | %.0f | %.0f | %.2f |\n' "$server" "$n" "$c" \
                    "$rps" "$(python3 -c "print($rps/$fl)")" "$p50" "$p99" "$la" >>"$OUT"
            done
            unset R
        done
    done
    echo >>"$OUT"
fi

# --- 5. in-process (criterion) ----------------------------------------------------------
if [ "$SKIP_CRITERION" = 0 ]; then
    sizes="1000,$SIZES"
    log "cargo bench --bench handler (IBI_BENCH_ITEMS=$sizes)"
    IBI_BENCH_ITEMS="$sizes" cargo bench --bench handler >"$WORK/criterion.log" 2>&1 \
        || { cat "$WORK/criterion.log" >&2; exit 1; }
    {
        echo "## In process: ibi_archive::cgi::handle (criterion median, µs)"
        echo
        echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
        echo
        python3 - "$TARGET/criterion" "$sizes" <<'PY'
import json, os, sys
base, sizes = sys.argv[1], [s for s in sys.argv[2].split(",") if s]
cases = ["hit_rep", "hit_ibip", "miss_rep", "miss_rep_local", "miss_ibip", "filtered_chain", "describe"]
print("| case | " + " | ".join(f"N={s}" for s in sizes) + f" | N={sizes[-1]} / N={sizes[0]} |")
print("|---" * (len(sizes) + 2) + "|")
for c in cases:
    row = []
    for s in sizes:
        p = os.path.join(base, f"handler_{s}", c, "new", "estimates.json")
        try:
            row.append(json.load(open(p))["median"]["point_estimate"] / 1000)
        except OSError:
            row.append(None)
    cells = [f"{v:.1f}" if v is not None else "-" for v in row]
    ratio = f"{row[-1] / row[0]:.2f}" if row[0] and row[-1] else "-"
    print(f"| {c} | " + " | ".join(cells) + f" | {ratio} |")
PY
        echo
    } >>"$OUT"
fi

log "report: $OUT"
cat "$OUT"
