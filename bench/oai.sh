#!/usr/bin/env bash
# The OAI-PMH data provider under harvest: complete and selective harvests of a generated
# Archive, through `ibi-archive serve` and through the CGI under lighttpd. Writes a
# markdown report (see BENCHMARKS.md, "OAI-PMH harvest").
#
#   bench/oai.sh [--items 100000] [--runs 3] [--tail 300] [--servers serve,lighttpd]
#                [--out FILE] [--no-build]
#
# What it does:
#  1. builds ibi-archive (release) and the gen-archive example (--no-build takes those in
#     the target directory);
#  2. for each N of --items, generates `gen-archive --oai` (a metadata item for every
#     original, ~2 % of them tombstones; cached in <target>/bench-archives/ as
#     oai-v<version>-n<N>-s1/), then `ibi-archive check`, which writes var/oai-records
#     (timed); the records and deleted records it lists are what a harvest must return;
#  3. for each server of --servers (`serve`: `ibi-archive serve`; `lighttpd`: the CGI under
#     lighttpd, configured by lib/httpd.sh around cgi-bin/lighttpd/ibi-archive.conf as
#     run.sh does), --runs times, interleaved:
#     - a complete harvest, ListRecords oai_dc from the start, following resumption tokens
#       (the Archive's default page size, 100), each page timed from request to last byte
#       by oai_harvest.py (a new connection per page): pages/s, records/s, median, 99th
#       percentile and worst page; the counts checked against var/oai-records;
#     - the first page of that harvest alone (it counts the list's size in the index);
#     - a selective harvest `from` the datestamp of the --tail'th record from the end (a
#       few hundred records): its first page and the whole of it;
#     then, var/oai-records moved aside, what a harvester meets while the provider builds
#       it again apart from the requests: the first answer (503, Retry-After) and its time,
#       and the seconds until a list answers 200; the index the provider wrote is compared
#       with check's, and check's is put back (also on failure).
#
# Figures are medians over the runs; a run's worst page is the worst of its pages, and the
# table gives the median of the runs' worst and the worst of all. Times are wall-clock on
# whatever else the machine does: the load average is printed beside them. The server is
# started once per server and size. Run as root, the CGI runs as www-data (var/ is given to
# it, as run.sh does). Servers run on 127.0.0.1 only and are stopped by PID on exit.
set -euo pipefail

SIZES="100000"
RUNS=3
TAIL=300
SERVERS="serve,lighttpd"
OUT=""
BUILD=1
while [ $# -gt 0 ]; do
    case "$1" in
        --items) SIZES="$2"; shift 2 ;;
        --runs) RUNS="$2"; shift 2 ;;
        --tail) TAIL="$2"; shift 2 ;;
        --servers) SERVERS="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
        *) echo "oai.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
umask 022
# shellcheck source=lib/httpd.sh source-path=SCRIPTDIR disable=SC1091
. "$REPO/bench/lib/httpd.sh"
TARGET="${CARGO_TARGET_DIR:-$REPO/target}"
case "$TARGET" in /*) ;; *) TARGET="$REPO/$TARGET" ;; esac
CACHE="$TARGET/bench-archives"
OUT="${OUT:-$TARGET/oai-results.md}"
mkdir -p "$CACHE"
for tool in cargo curl python3; do
    command -v "$tool" >/dev/null || { echo "oai.sh: $tool is needed" >&2; exit 1; }
done

WORK="$(mktemp -d -t ibi-oai-bench.XXXXXX)"
chmod 755 "$WORK"
SERVER_PIDS=()
MOVED_INDEX="" # the Archive root whose var/oai-records is in $WORK while measuring without it
log() { echo "oai.sh: $*" >&2; }

stop_server() {
    local pid="$1"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
cleanup() {
    local pid
    for pid in "${SERVER_PIDS[@]+"${SERVER_PIDS[@]}"}"; do stop_server "$pid"; done
    if [ -n "$MOVED_INDEX" ]; then mv "$WORK/oai-records" "$MOVED_INDEX/var/oai-records"; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 1. build -------------------------------------------------------------------------
TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
if [ "$BUILD" = 1 ]; then
    log "cargo build --release"
    cargo build -q --release --bin ibi-archive --example gen-archive
fi
BIN="$TARGET/$TRIPLE/release/ibi-archive"
GEN="$TARGET/$TRIPLE/release/examples/gen-archive"
[ -x "$BIN" ] && [ -x "$GEN" ] || { log "no release build in $TARGET/$TRIPLE"; exit 1; }
mkdir -p "$WORK/bin"
cp "$BIN" "$WORK/bin/ibi-archive"
chmod 755 "$WORK/bin" "$WORK/bin/ibi-archive"
BIN="$WORK/bin/ibi-archive"
HARVEST=(python3 "$REPO/bench/oai_harvest.py")

WWW_IDS=""
if [ "$(id -u)" = 0 ] && id www-data >/dev/null 2>&1; then WWW_IDS="www-data:www-data"; fi
give_var() { # root: the CGI runs as www-data and must write var/
    if [ -n "$WWW_IDS" ]; then
        chown -R "$WWW_IDS" "$1/var"
        local d="$1"
        while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null || true; d="$(dirname "$d")"; done
    fi
}

# --- 2. archives ----------------------------------------------------------------------
GEN_VERSION="$(sed -n 's/^pub const GENERATOR_VERSION: u32 = \([0-9]*\);/\1/p' bench/archive_gen.rs)"
archive() { # N -> prints the root; generates it when missing
    local n="$1" root="$CACHE/oai-v$GEN_VERSION-n$1-s1"
    if [ ! -s "$root.samples.env" ]; then
        rm -rf "$root" "$root.samples.env"
        log "generating $n items (--oai) into $root"
        "$GEN" --root "$root" --items "$n" --oai >/dev/null
    fi
    mkdir -p "$root/var"
    "$BIN" prefixes --root "$root" >/dev/null
    give_var "$root"
    echo "$root"
}

start_server() { # kind root service_ibi -> sets SERVER_PID SERVER_PORT
    local kind="$1" root="$2" ibi="$3" dir
    dir="$(mktemp -d "$WORK/$kind.XXXXXX")"
    chmod 755 "$dir"
    SERVER_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    case "$kind" in
        serve)
            setsid "$BIN" serve --root "$root" --listen "127.0.0.1:$SERVER_PORT" --no-inclusion \
                </dev/null >"$dir/stdio.log" 2>&1 &
            ;;
        lighttpd)
            mkdir -p "$dir/htdocs" "$dir/uploads"
            echo "bench server" >"$dir/htdocs/index.html"
            chmod -R a+rX "$dir"
            : >"$dir/error.log"
            if [ -n "$WWW_IDS" ]; then chown "$WWW_IDS" "$dir/error.log" "$dir/uploads"; fi
            local site=(--dir "$dir" --port "$SERVER_PORT" --root "$root" --bin "$BIN" --service-ibi "$ibi")
            if [ -n "$WWW_IDS" ]; then site+=(--user www-data); fi
            lighttpd_config "${site[@]}" >"$dir/lighttpd.conf"
            setsid "$LIGHTTPD_BIN" -D -f "$dir/lighttpd.conf" </dev/null >"$dir/stdio.log" 2>&1 &
            ;;
        *) log "unknown server $kind"; exit 2 ;;
    esac
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    for _ in $(seq 1 200); do
        if curl -s -o /dev/null "http://127.0.0.1:$SERVER_PORT/$ibi?verb=Identify"; then return 0; fi
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    log "$kind did not start:"; cat "$dir"/*.log >&2
    exit 1
}
stop_current() {
    stop_server "$SERVER_PID"
    local keep=() p
    for p in "${SERVER_PIDS[@]}"; do [ "$p" = "$SERVER_PID" ] || keep+=("$p"); done
    SERVER_PIDS=("${keep[@]+"${keep[@]}"}")
}

rebuild() { # kind base: without the index, the first answer and the seconds until a list is answered
    local kind="$1" url="$2?verb=ListRecords&metadataPrefix=oai_dc" t0 first status
    t0="$(date +%s.%N)"
    first="$(curl -s -o /dev/null -w '%{http_code} %{time_total} %header{retry-after}' "$url")"
    while :; do
        status="$(curl -s -o /dev/null -w '%{http_code}' "$url")"
        [ "$status" = 200 ] && break
        [ "$status" = 503 ] || { log "$kind: $status while the index is built"; break; }
        if python3 -c "import sys; sys.exit(0 if $(date +%s.%N) - $t0 > 600 else 1)"; then
            log "$kind: not built within 600 s"
            break
        fi
        sleep 0.2
    done
    printf '%s\t%s\t%s\t%s\n' "$kind" "$first" \
        "$(python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')")" "$(cut -d' ' -f1 /proc/loadavg)" >>"$WORK/rebuilds"
}

harvest() { # label base [oai_harvest.py options] -> appends "label<TAB>json" to $WORK/results
    local label="$1" base="$2" la json
    shift 2
    la="$(cut -d' ' -f1 /proc/loadavg)"
    json="$("${HARVEST[@]}" "$base" "$@")" || { log "$label failed: $json"; exit 1; }
    printf '%s\t%s\t%s\n' "$label" "$la" "$json" >>"$WORK/results"
    python3 - "$label" "$json" <<'PY' >&2
import json, sys
r = json.loads(sys.argv[2])
print(f"oai.sh: {sys.argv[1]}: {r['pages']} pages, {r['records']} records ({r['deleted']} deleted)"
      f" in {r['seconds']:.2f} s, first page {r['page_ms'][0]:.1f} ms, worst {max(r['page_ms']):.1f} ms")
PY
}

{
    echo "# ibi-archive OAI-PMH harvest, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "- machine: $(nproc) CPUs, $(uname -r), $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
    echo "- $(rustc -V); $(lighttpd -v 2>/dev/null | head -1 | cut -d' ' -f1); $(python3 -V)"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
} >"$OUT"

IFS=, read -r -a NS <<<"$SIZES"
IFS=, read -r -a KINDS <<<"$SERVERS"
for n in "${NS[@]}"; do
    root="$(archive "$n")"
    # shellcheck disable=SC1090,SC1091
    . "$root.samples.env"
    t0="$(date +%s.%N)"
    "$BIN" check --root "$root" >"$WORK/check.log" 2>&1 || { log "check found faults:"; grep -v ': note: ' "$WORK/check.log" >&2 || true; }
    t1="$(date +%s.%N)"
    give_var "$root"
    index="$root/var/oai-records"
    total="$(($(wc -l <"$index") - 2))"
    deleted="$(grep -c '^[0-9-]* D ' "$index" || true)"
    # sed reads the whole pipe: head would leave tail to die of SIGPIPE (pipefail).
    from_seconds="$(tail -n "$TAIL" "$index" | sed -n 1p | cut -d' ' -f1)"
    from="$(date -u -d "@$from_seconds" +%Y-%m-%dT%H:%M:%SZ)"
    tail_count="$(awk -v s="$from_seconds" 'NR > 2 && $1 >= s' "$index" | wc -l)"
    {
        echo "## N = $n items ($total metadata items, $deleted of them tombstones)"
        echo
        echo "- \`ibi-archive check\` (writes var/oai-records): $(python3 -c "print(f'{$t1-$t0:.1f}')") s; $(grep "^checked" "$WORK/check.log" || true)"
        echo "- var/oai-records: $(stat -c %s "$index") bytes; selective harvest from $from: $tail_count records"
        echo
    } >>"$OUT"
    : >"$WORK/results"
    : >"$WORK/rebuilds"
    for kind in "${KINDS[@]}"; do
        start_server "$kind" "$root" "$SERVICE_IBI"
        base="http://127.0.0.1:$SERVER_PORT/$SERVICE_IBI"
        for run in $(seq 1 "$RUNS"); do
            harvest "$kind full" "$base"
            harvest "$kind full-first index" "$base" --pages 1
            harvest "$kind from-first index" "$base" --from "$from" --pages 1
            harvest "$kind from index" "$base" --from "$from"
        done
        for run in $(seq 1 "$RUNS"); do
            mv "$index" "$WORK/oai-records"
            MOVED_INDEX="$root"
            rebuild "$kind" "$base"
            cmp -s "$index" "$WORK/oai-records" ||
                log "$kind: the index the provider built is not the one check wrote"
            mv "$WORK/oai-records" "$index"
            MOVED_INDEX=""
        done
        stop_current
    done
    {
        echo "### Without the index: the provider builds it apart from the requests"
        echo
        echo "| server | first answer | its ms | Retry-After | s until a list is answered | load avg |"
        echo "|---|---|---|---|---|---|"
        while IFS=$'\t' read -r kind first seconds la; do
            read -r code time retry <<<"$first"
            echo "| $kind | $code | $(python3 -c "print(f'{$time * 1000:.1f}')") | ${retry:--} | $seconds | $la |"
        done <"$WORK/rebuilds"
        echo
    } >>"$OUT"
    python3 - "$WORK/results" "$total" "$deleted" "$tail_count" >>"$OUT" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, la, js = line.rstrip("\n").split("\t")
    rows.setdefault(label, []).append((float(la), json.loads(js)))
total, deleted, tail = (int(x) for x in sys.argv[2:5])
med = statistics.median
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
problems = []
print("### Complete harvest: ListRecords oai_dc, every page (median of the runs)")
print()
print("| server | records | deleted | pages | s | pages/s | records/s | median page ms | p99 page ms | worst page ms (median of runs) | worst of all runs | worst page is | load avg |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for label, runs in rows.items():
    if not label.endswith(" full"):
        continue
    kind = label.split()[0]
    rs = [r for _, r in runs]
    for r in rs:
        if r["records"] != total or r["deleted"] != deleted:
            problems.append(f"{label}: {r['records']} records ({r['deleted']} deleted), the index lists {total} ({deleted})")
    worst = [max(r["page_ms"]) for r in rs]
    where = sorted({r["page_ms"].index(max(r["page_ms"])) + 1 for r in rs})
    print(f"| {kind} | {rs[0]['records']} | {rs[0]['deleted']} | {rs[0]['pages']} "
          f"| {med(r['seconds'] for r in rs):.1f} "
          f"| {med(r['pages'] / r['seconds'] for r in rs):.0f} "
          f"| {med(r['records'] / r['seconds'] for r in rs):.0f} "
          f"| {med(med(r['page_ms']) for r in rs):.1f} "
          f"| {med(pct(r['page_ms'], 99) for r in rs):.1f} "
          f"| {med(worst):.1f} | {max(worst):.1f} | page {', '.join(map(str, where))} "
          f"| {med(la for la, _ in runs):.2f} |")
print()
print("### Single requests (ms, median of the runs)")
print()
print("| server | request | index | records | pages | first page ms | whole list ms | load avg |")
print("|---|---|---|---|---|---|---|---|")
names = {"full-first": "complete harvest, first page", "from-first": "from (selective), first page",
         "from": "from (selective), whole"}
for label, runs in rows.items():
    parts = label.split()
    if len(parts) != 3:
        continue
    kind, what, how = parts
    rs = [r for _, r in runs]
    if what == "from":
        for r in rs:
            if r["records"] != tail:
                problems.append(f"{label}: {r['records']} records, the index lists {tail} from the date")
    whole = f"{med(r['seconds'] * 1000 for r in rs):.1f}" if what == "from" else "-"
    print(f"| {kind} | {names[what]} | {'yes' if how == 'index' else 'no'} | {rs[0]['records']} "
          f"| {rs[0]['pages']} | {med(r['page_ms'][0] for r in rs):.1f} | {whole} "
          f"| {med(la for la, _ in runs):.2f} |")
print()
if problems:
    print("Problems:")
    print()
    for p in problems:
        print(f"- {p}")
    print()
PY
done
log "report: $OUT"
cat "$OUT"
