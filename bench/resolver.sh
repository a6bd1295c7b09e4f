#!/usr/bin/env bash
# The resolver on loopback, each figure beside its floor and ceiling measured in the same
# run. Writes a markdown report (default bench/resolver-results.md).
#
#   bench/resolver.sh [--archives 10,100] [--duration 8] [--connections 16]
#                     [--out FILE] [--no-build] [--keep]
#
# --keep leaves the Archives' and resolvers' logs in the temporary directory it names.
#
# For each K of --archives:
#  1. K Archives, each an `ibi-archive serve` on 127.0.0.1 over its own copy of
#     sample-archive/ with its own service IBI (archiveserviceibi rewritten); only one of
#     them keeps col/ (it holds 8JMKD3MGP8W/35MME4E), the others have an empty col/.
#     They run with --max-per-client and --max-connections raised, as the resolver is
#     their only client;
#  2. two resolvers: one with the location memory (the default), one with
#     `[memory] entries = 0`; every Archive registered (`ibi-resolver register`, the key
#     on stdin) and included (`ibi-archive include --resolver URL`) in both;
#  3. `wrk -t2 -cC -dD --latency` (and `-t1 -c1` for the unloaded latency; wrk does not
#     follow redirects: each request is one resolution) at
#       floor       the holding Archive directly, with the urlRequest the resolver sends
#                   (read from that Archive's request log): the latency floor, and at -cC
#                   the Archives' capacity (req/s of one Archive);
#       fan-out     a first resolution: the memory-off resolver, the held item;
#       remembered  the memory-on resolver, the held item, after one warm-up request;
#       miss        the memory-on resolver, an IBI nobody holds (8JMKD3MGP8W/35MME4F);
#     the ceiling of a resolution is capacity ÷ the Archive requests it needs, all Archives
#     sharing the machine's CPUs with the resolver: remembered 2 (urlRequest +
#     acknowledgment), fan-out K+1, miss K. The Archive requests per resolution are also
#     counted in the Archives' own request logs (one line per request) over each run;
#  4. one Archive that never answers (accepts and holds the connection) and one that
#     answers after 1 s (bench/peer.py) are included beside the K: first a few misses one
#     after the other (how many pay the 2 s timeout before the silent one is dormant,
#     dormant_after being 5), then fan-out, remembered and miss again under wrk.
#
# Needs cargo, wrk, curl, python3. Every process started is stopped by its PID on exit,
# failure included. Only 127.0.0.1 is used.
set -euo pipefail

ARCHIVES="10,100"
DURATION=8
CONNS=16
OUT=""
BUILD=1
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --archives) ARCHIVES="$2"; shift 2 ;;
        --duration) DURATION="$2"; shift 2 ;;
        --connections) CONNS="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --keep) KEEP=1; shift ;;
        -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
        *) echo "resolver.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
umask 022
OUT="${OUT:-$REPO/bench/resolver-results.md}"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac

for tool in cargo rustc wrk curl python3; do
    command -v "$tool" >/dev/null || { echo "resolver.sh: $tool is needed" >&2; exit 1; }
done

log() { echo "resolver.sh: $*" >&2; }

# K resolutions at once fan out to K Archives each: many sockets.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

TARGET="${CARGO_TARGET_DIR:-$REPO/target}"
case "$TARGET" in /*) ;; *) TARGET="$REPO/$TARGET" ;; esac
BIN="$TARGET/$(rustc -vV | sed -n 's/^host: //p')/release"
if [ "$BUILD" = 1 ]; then
    log "building (release)"
    cargo build --release --bins -p ibi-archive -p ibi-resolver >&2
fi
ARCHIVE_BIN="$BIN/ibi-archive"
RESOLVER_BIN="$BIN/ibi-resolver"
for exe in "$ARCHIVE_BIN" "$RESOLVER_BIN"; do
    [ -x "$exe" ] || { log "$exe is missing: cargo build --release"; exit 1; }
done

WORK="$(mktemp -d -t ibi-resolver-bench.XXXXXX)"
PIDS=()
stop_all() {
    local pid
    for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    PIDS=()
}
cleanup() {
    stop_all
    if [ "$KEEP" = 1 ]; then log "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

RESOLVER_IBI="J8LNKB5R7W/3FUQHC5"
SAMPLE_SERVICE="sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
KEY="1234567890"
HIT="8JMKD3MGP8W/35MME4E"   # sid.inpe.br/mtc-m18@80/2009/07.21.13.23, in sample-archive/
MISS="8JMKD3MGP8W/35MME4F"  # nobody's
TIMEOUT_S=2                 # [archives] timeout of both resolvers
SLOW_S=1                    # the slow Archive's delay

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_port() { # port pid what
    for _ in $(seq 1 200); do
        if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),0.2).close()' "$1" 2>/dev/null; then
            return 0
        fi
        kill -0 "$2" 2>/dev/null || break
        sleep 0.05
    done
    log "$3 does not listen on port $1"
    exit 1
}
service_ibi() { # i -> the service IBI of Archive i (Archive 0 keeps the sample's)
    if [ "$1" = 0 ]; then
        echo "$SAMPLE_SERVICE"
    else
        printf 'urlib.net/www/2020/01.01.%02d.%02d\n' $(($1 / 60)) $(($1 % 60))
    fi
}

to_us() { # wrk latency ("812.00us", "1.20ms", "2.01s", "1.00m") -> µs
    python3 -c '
import re,sys
m=re.match(r"([0-9.]+)(us|ms|s|m)$", sys.argv[1]); v=float(m.group(1))
print(round(v*{"us":1,"ms":1e3,"s":1e6,"m":6e7}[m.group(2)]))' "$1"
}

# wrk at url with c connections -> sets W_RPS W_P50 W_P99 W_N W_NON3XX W_ERR W_LOAD
wrk_run() { # url conns
    local threads=2 outp
    [ "$2" -lt 2 ] && threads=1
    W_LOAD="$(cut -d' ' -f1 /proc/loadavg)"
    outp="$(wrk -t"$threads" -c"$2" -d"${DURATION}s" --timeout 10s --latency "$1")"
    W_RPS="$(echo "$outp" | awk '/Requests\/sec/{print $2}')"
    W_P50="$(to_us "$(echo "$outp" | awk '$1=="50%"{print $2}')")"
    W_P99="$(to_us "$(echo "$outp" | awk '$1=="99%"{print $2}')")"
    W_N="$(echo "$outp" | awk '/requests in/{print $1}')"
    W_NON3XX="$(echo "$outp" | awk '/Non-2xx or 3xx/{print $NF}')"
    W_NON3XX="${W_NON3XX:-0}"
    W_ERR="$(echo "$outp" | awk '/Socket errors/{print $3+$5+$7+$9}' | tr -d ',')"
    W_ERR="${W_ERR:-0}"
}

# Request lines in every Archive's log -> "urlRequests acknowledgments" (a log line may be
# cut short before servicesubject: every other request of the resolver is an acknowledgment)
archive_requests() {
    cat "$WORK"/k*/a*.log 2>/dev/null | awk '
        /servicesubject=urlRequest/ {u++; next}
        /servicesubject=inclusionConfirmationRequest/ {next}
        /"GET / {a++}
        END {print u+0, a+0}'
}

status_of() { curl -s -o /dev/null -w '%{http_code}' "$1"; }

{
    echo "# ibi-resolver benchmarks, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "- machine: $(nproc) CPUs, $(uname -r), $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
    echo "- $(rustc -V); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- wrk -t2 -c$CONNS -d${DURATION}s --latency --timeout 10s (and -t1 -c1); everything on 127.0.0.1,"
    echo "  the K Archives, both resolvers and wrk sharing the machine's CPUs"
    echo "- resolvers: [archives] timeout = \"${TIMEOUT_S}s\", dormant_after = 5 (default); one with the"
    echo "  location memory (default entries), one with [memory] entries = 0"
    echo
    echo "Cases: *floor* is wrk at the holding Archive directly with the urlRequest the resolver"
    echo "sends (copied from its request log); at -c$CONNS its req/s is the Archives' capacity."
    echo "*fan-out* is a first resolution (the memory-off resolver; one Archive of K holds the"
    echo "item), *remembered* the memory-on resolver after one warm-up request, *miss* an IBI"
    echo "nobody holds. The ceiling is capacity ÷ the Archive requests one resolution needs:"
    echo "2 remembered (urlRequest + acknowledgment), K+1 fan-out, K miss — all Archives share"
    echo "the same CPUs, so their requests add up. *Archive req/res* is counted from the"
    echo "Archives' own request logs over the run (urlRequests + acknowledgments ÷ resolutions)."
    echo "A fan-out asks fewer than K when the holder answers before the other requests leave;"
    echo "acknowledgments the resolver drops (beyond 256 under way; /metrics counts them) never"
    echo "reach an Archive; requests still under way when wrk stops are in the logs but not in"
    echo "wrk's count, which inflates the slowest rows. Latencies in µs; *+p50*, *+p99* are"
    echo "added over the floor at the same -c. Every figure is one run (no medians), the runs"
    echo "following one another; *load* is the 1-minute load average when the run started, the"
    echo "benchmark's own processes included."
    echo
} >"$OUT"

IFS=, read -r -a KS <<<"$ARCHIVES"
for K in "${KS[@]}"; do
    D="$WORK/k$K"
    mkdir -p "$D"
    log "K=$K: preparing $K Archives"

    # --- Archives ---------------------------------------------------------------------
    PORTS=()
    for i in $(seq 0 $((K - 1))); do
        root="$D/a$i"
        mkdir -p "$root/col" "$root/var"
        if [ "$i" = 0 ]; then
            cp -r sample-archive/col/. "$root/col/"
        fi
        port="$(free_port)"
        PORTS+=("$port")
        sed -e "s|^archiveserviceibi *=.*|archiveserviceibi = \"$(service_ibi "$i")\"|" \
            -e "s|^archiveaddress *=.*|archiveaddress    = \"127.0.0.1:$port\"|" \
            sample-archive/archive.toml >"$root/archive.toml"
        "$ARCHIVE_BIN" serve --root "$root" --listen "127.0.0.1:$port" \
            --max-connections 4096 --max-per-client 4096 2>"$D/a$i.log" >/dev/null &
        PIDS+=("$!")
    done
    for i in $(seq 0 $((K - 1))); do
        wait_port "${PORTS[$i]}" "${PIDS[$i]}" "Archive $i"
    done

    # --- resolvers --------------------------------------------------------------------
    start_resolver() { # name memory-table -> sets R_PORT R_PID
        local dir="$D/$1"
        mkdir -p "$dir"
        R_PORT="$(free_port)"
        cat >"$dir/resolver.toml" <<EOF
serviceibi = "$RESOLVER_IBI"
publicurl = "http://127.0.0.1:$R_PORT"
listen = "127.0.0.1:$R_PORT"
database = "registry.sqlite"
[archives]
timeout = "${TIMEOUT_S}s"
networks = ["127.0.0.0/8"]
$2
EOF
        "$RESOLVER_BIN" serve --config "$dir/resolver.toml" 2>"$dir/resolver.log" &
        R_PID=$!
        PIDS+=("$R_PID")
        wait_port "$R_PORT" "$R_PID" "resolver $1"
    }
    start_resolver mem ""
    MEM_PORT=$R_PORT
    start_resolver off $'[memory]\nentries = 0'
    OFF_PORT=$R_PORT
    log "K=$K: registering and including $K Archives in both resolvers"
    for r in mem off; do
        port=$MEM_PORT; [ "$r" = off ] && port=$OFF_PORT
        for i in $(seq 0 $((K - 1))); do
            echo "$KEY" | "$RESOLVER_BIN" register "$(service_ibi "$i")" --email bench@example.org \
                --config "$D/$r/resolver.toml" >/dev/null
            out="$("$ARCHIVE_BIN" include --root "$D/a$i" --resolver "http://127.0.0.1:$port/$RESOLVER_IBI")"
            case "$out" in
                *"confirmation successful"*) ;;
                *) log "Archive $i not included in $r: $out"; exit 1 ;;
            esac
        done
    done

    MEM="http://127.0.0.1:$MEM_PORT"
    OFF="http://127.0.0.1:$OFF_PORT"
    # Checks, and the urlRequest the resolver sends, from the holding Archive's log.
    for u in "$MEM/$HIT" "$OFF/$HIT"; do
        s="$(status_of "$u")"; [ "$s" = 302 ] || { log "$u answered $s"; exit 1; }
    done
    s="$(status_of "$MEM/$MISS")"; [ "$s" = 404 ] || { log "$MEM/$MISS answered $s"; exit 1; }
    FLOOR_PATH="$(sed -n 's/^[^"]*"GET \([^"]*servicesubject=urlRequest[^"]*\)".*/\1/p' "$D/a0.log" \
        | grep -F "parsedibiurl.ibi=$HIT" | head -1)"
    [ -n "$FLOOR_PATH" ] || { log "no urlRequest for $HIT in the holding Archive's log"; exit 1; }
    FLOOR="http://127.0.0.1:${PORTS[0]}$FLOOR_PATH"
    body="$(curl -s "$FLOOR")"
    case "$body" in *url*) ;; *) log "the floor request is not a hit: $body"; exit 1 ;; esac

    # --- measurements -----------------------------------------------------------------
    declare -A RPS=() P50=() P99=() PER=() NOTE=() LOAD=()
    measure() { # name url conns expect(3xx|404)
        local before after u0 a0 u1 a1
        read -r u0 a0 <<<"$(archive_requests)"
        wrk_run "$2" "$3"
        sleep 1 # acknowledgments are sent after the answer
        read -r u1 a1 <<<"$(archive_requests)"
        local key="$1/$3"
        RPS[$key]="$W_RPS"; P50[$key]="$W_P50"; P99[$key]="$W_P99"; LOAD[$key]="$W_LOAD"
        PER[$key]="$(python3 -c "n=$W_N; print(f'{($u1-$u0)/n:.2f} + {($a1-$a0)/n:.2f}' if n else '-')")"
        NOTE[$key]=""
        if [ "$4" = 3xx ] && [ "$W_NON3XX" != 0 ]; then NOTE[$key]="$W_NON3XX answers not 3xx"; fi
        if [ "$4" = 404 ] && [ "$W_NON3XX" != "$W_N" ]; then NOTE[$key]="$((W_N - W_NON3XX)) answers not 404"; fi
        if [ "$W_ERR" != 0 ]; then NOTE[$key]="${NOTE[$key]:+${NOTE[$key]}; }$W_ERR socket errors"; fi
        log "K=$K $key: $W_RPS req/s p50 $W_P50 µs p99 $W_P99 µs, Archive requests/resolution ${PER[$key]} (load $W_LOAD) ${NOTE[$key]}"
    }
    curl -s -o /dev/null "$MEM/$HIT" # the warm-up: remembered from here on
    for c in 1 "$CONNS"; do
        measure floor "$FLOOR" "$c" 3xx
        measure fan-out "$OFF/$HIT" "$c" 3xx
        measure remembered "$MEM/$HIT" "$c" 3xx
        measure miss "$MEM/$MISS" "$c" 404
    done

    # --- a silent and a slow Archive among the K --------------------------------------
    log "K=$K: adding a silent and a slow Archive"
    SILENT_SERVICE="urlib.net/www/2021/02.02.02.01"
    SLOW_SERVICE="urlib.net/www/2021/02.02.02.02"
    SILENT_PORT="$(free_port)"
    python3 bench/peer.py silent "$SILENT_PORT" >"$D/silent.out" &
    PIDS+=("$!"); wait_port "$SILENT_PORT" "$!" "the silent Archive"
    SLOW_PORT="$(free_port)"
    python3 bench/peer.py slow "$SLOW_PORT" "$SLOW_S" >"$D/slow.out" &
    PIDS+=("$!"); wait_port "$SLOW_PORT" "$!" "the slow Archive"
    include_by_hand() { # resolver-name resolver-url service address
        echo "$KEY" | "$RESOLVER_BIN" register "$3" --email bench@example.org \
            --config "$D/$1/resolver.toml" >/dev/null
        curl -s "$2/$RESOLVER_IBI?servicesubject=inclusionRequest&archiveaddress=$4&archiveserviceibi=$3&archiveip=127.0.0.1&archiveprotocol=HTTP&archiveplatformversion=1&archiveadmemailaddress=bench@example.org&registrationkey=$KEY" \
            | tr -d '\r' | tr '\n' ' '
    }
    for r in mem off; do
        url="$MEM"; [ "$r" = off ] && url="$OFF"
        log "K=$K $r: silent: $(include_by_hand "$r" "$url" "$SILENT_SERVICE" "127.0.0.1:$SILENT_PORT")"
        log "K=$K $r: slow: $(include_by_hand "$r" "$url" "$SLOW_SERVICE" "127.0.0.1:$SLOW_PORT")"
    done
    sleep 2.5 # the servers read the included Archives again every 2 s
    # Misses one after the other on the memory-off resolver: which pay the timeout?
    SERIAL=()
    for _ in $(seq 1 8); do
        SERIAL+=("$(curl -s -o /dev/null -w '%{time_total}' "$OFF/$MISS")")
    done
    PAID="$(python3 -c "import sys; print(sum(float(t) >= $TIMEOUT_S * 0.95 for t in sys.argv[1:]))" "${SERIAL[@]}")"
    SERIAL_MS="$(python3 -c "import sys; print(', '.join(f'{float(t)*1000:.0f}' for t in sys.argv[1:]))" "${SERIAL[@]}")"
    log "K=$K: serial misses (ms): $SERIAL_MS; $PAID paid the ${TIMEOUT_S}s timeout"
    measure "fan-out +silent+slow" "$OFF/$HIT" "$CONNS" 3xx
    sleep 1 # the slow Archive's last answers (1 s) out of the way
    measure "remembered +silent+slow" "$MEM/$HIT" "$CONNS" 3xx
    measure "miss +silent+slow" "$MEM/$MISS" "$CONNS" 404
    # What each resolver saw of the silent and slow Archives, its acknowledgments and its
    # memory (the registry is written every 2 s).
    sleep 2.5
    PEER_METRICS=""
    for r in mem off; do
        url="$MEM"; [ "$r" = off ] && url="$OFF"
        PEER_METRICS+="$(curl -s "$url/metrics" | grep -v '^#' \
            | grep -E -e '^ibi_resolver_(archive_requests_total|archive_up|archive_consecutive_failures)\{archive="urlib.net/www/2021/02' \
                      -e '^ibi_resolver_(acknowledgments_total|location_memory_total|overloaded_total|resolutions_total)' \
            | sed "s/^/$r: /" || true)"$'\n'
    done
    PEER_ARCHIVES="$("$RESOLVER_BIN" archives --config "$D/mem/resolver.toml" 2>/dev/null | grep -F -e "2021/02.02.02" | sed 's/^/mem: /' || true)"

    # --- report -----------------------------------------------------------------------
    CAP="${RPS[floor/$CONNS]}"
    {
        echo "## K = $K Archives"
        echo
        echo "Capacity (floor at -c$CONNS): $CAP req/s of one Archive; load average before this K: ${LOAD[floor/1]}."
        echo
        echo "| case | -c | req/s | ceiling req/s | ÷ ceiling | p50 µs | p99 µs | +p50 µs | +p99 µs | Archive req/res (url + ack) | load | note |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
        for c in 1 "$CONNS"; do
            for name in floor fan-out remembered miss "fan-out +silent+slow" "remembered +silent+slow" "miss +silent+slow"; do
                key="$name/$c"
                [ -n "${RPS[$key]:-}" ] || continue
                case "$name" in
                    floor) need=1 ;;
                    fan-out*) need=$((K + 1)) ;;
                    remembered*) need=2 ;;
                    miss*) need=$K ;;
                esac
                python3 - "$name" "$c" "$CONNS" "${RPS[$key]}" "$CAP" "$need" "${P50[$key]}" "${P99[$key]}" \
                    "${P50[floor/$c]}" "${P99[floor/$c]}" "${PER[$key]}" "${LOAD[$key]}" "${NOTE[$key]}" <<'PY'
import sys
name, c, conns, rps, cap, need, p50, p99, f50, f99, per, load, note = sys.argv[1:]
rps, cap, need = float(rps), float(cap), int(need)
if c == conns:
    ceil = cap / need
    ceil_s, ratio = (f"{ceil:.0f} (÷{need})", f"{rps / ceil:.2f}") if name != "floor" else ("-", "-")
else:
    ceil_s, ratio = "-", "-"
add50 = "-" if name == "floor" else f"{int(p50) - int(f50):+d}"
add99 = "-" if name == "floor" else f"{int(p99) - int(f99):+d}"
print(f"| {name} | {c} | {rps:.0f} | {ceil_s} | {ratio} | {p50} | {p99} | {add50} | {add99} | {per} | {load} | {note} |")
PY
            done
        done
        echo
        echo "With a silent Archive (accepts, never answers) and a slow one (answers nothing after"
        echo "${SLOW_S} s) included beside the K: 8 misses one after the other on the memory-off resolver took"
        echo "$SERIAL_MS ms; $PAID of them paid the ${TIMEOUT_S} s timeout before the silent Archive was dormant"
        echo "(every miss waits for the slow one)."
        echo
        echo "Both resolvers' /metrics at the end (the silent Archive is urlib.net/www/2021/02.02.02.01,"
        echo "the slow one …02.02), and \`ibi-resolver archives\` of the memory-on one:"
        echo
        echo '```'
        echo "$PEER_METRICS"
        echo "$PEER_ARCHIVES"
        echo '```'
        echo
    } >>"$OUT"
    unset RPS P50 P99 PER NOTE LOAD

    stop_all
done

echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT"
log "report: $OUT"
cat "$OUT"
