#!/usr/bin/env bash
# The resolver's scale and endurance, each figure a pass/fail against a target. Writes a
# markdown fragment (default bench/resolver-scale-results.md): one table row per check
# (check, target, measured, met?), then the details of each part, for a summary to include.
#
#   bench/resolver-scale.sh [--parts connections,archives,soak] [--out FILE]
#                           [--bin-dir DIR] [--no-build] [--keep]
#                           [--conn-seconds 20] [--many 1000] [--archives-seconds 20]
#                           [--include-cap 1024] [--soak-seconds 600] [--sample-seconds 30]
#
#   bench/resolver-scale.sh --parts connections,archives --no-build   # ~5 min
#   bench/resolver-scale.sh --parts soak --soak-seconds 60 --no-build  # a quick soak
#
# --bin-dir takes ibi-archive and ibi-resolver from DIR (and builds nothing); by default
# they are built (`cargo build --release`, unless --no-build) in
# ${CARGO_TARGET_DIR:-target}/<host triple>/release, as bench/resolver.sh does. --keep
# leaves the logs, configurations and raw results in the temporary directory it names.
# Exit status 1 when a check is not met (or the run could not be completed), 2 on a bad
# argument.
#
# Each part restarts its resolver once its Archives are included and measures that second
# process, a resolver as it starts on a registry already full: the inclusions (each an
# argon2id check of the key, 19 MiB while it runs) are measured as a check of their own in
# the archives part, and a resolver that kept those 19 MiB (as one did before the
# allocator was tuned) is restarted past --include-cap MiB rather than run out of memory.
#
# Parts (all by default; the descriptor limit is raised to the hard limit first, and
# reported):
#  connections  one resolver in front of 4 `ibi-archive serve` Archives, one of which
#               holds 8JMKD3MGP8W/35MME4E (sample-archive/col/). bench/conns.py opens
#               10,000 connections to the resolver and asks the (remembered) item on each;
#               once every one has had an answer, they are *held* (a request every 4 s,
#               as the resolver closes a connection idle 10 s), then for --conn-seconds
#               each asks back to back, as wrk -c10000 would. Met: 10,000 held to the end,
#               no socket error (connect, read, write, timeout 10 s), every answer a 302
#               or a 503 (the deliberate answer beyond [limits] resolutions under way,
#               counted). Run twice: [limits] resolutions = 1024 (the default) and 10000.
#               The resolver's VmRSS/VmHWM while they are held is reported. A hard
#               descriptor limit under 20,000 fails both without running them. Then
#               [limits] connections = 1000 and 1,100 connections: met when 1,000 are
#               answered and held and the 100 beyond are closed at once (end of file or
#               reset within 1 s, none left hanging), and when, 100 held ones closed, 100
#               of 110 new ones are answered and 10 closed.
#  archives     --many (1,000) Archives registered and included in one resolver: 999 are
#               `bench/peer.py many` (two processes, answering every urlRequest at once
#               with an empty body: not here), included one after the other by their
#               inclusionRequest (the resolver restarted whenever its VmRSS passes
#               --include-cap MiB); one is a real `ibi-archive serve` holding the item
#               (`ibi-archive include`). [archives] timeout = "10s" and dormant_after = 0,
#               so that every miss asks all 1,000. Then, the resolver restarted: wrk
#               --latency at a miss (-c1, then -t2 -c16) and at the remembered item
#               (-t2 -c16), --archives-seconds each; its VmRSS and VmHWM idle, after the
#               misses, after the hits and 35 s later. Met: VmHWM (the peak) ≤ 64 MiB,
#               both while including and after; the misses all 404 with no socket error
#               and no Archive request failed; their p50/p99 are reported.
#  soak         one resolver in front of 10 Archives (one holds the item), wrk -t2 -c16
#               for --soak-seconds with a Lua script rotating the remembered item, a miss,
#               a ?noredirect inspection and a malformed URL (/%zz), counting answers by
#               status. VmRSS sampled every --sample-seconds. Met: no 5xx but 503; no
#               socket error; memory flat: the last sample within 4 MiB of the first
#               sample at or after 60 s (the warm-up; half the soak when shorter than
#               2 min), and not growing at every sample after it (when there are 4 or
#               more); /metrics at the end (allowed to 127.0.0.0/8) counts no dropped
#               acknowledgment.
#
# Needs wrk, curl, python3 (3.8 or later; and cargo/rustc to build or find the
# executables). Only 127.0.0.1 is used; every process started is stopped by its PID on
# exit, failure included; the temporary directory is removed unless --keep.
set -euo pipefail

PARTS="connections,archives,soak"
OUT=""
BIN_DIR=""
BUILD=1
KEEP=0
CONN_SECONDS=20
MANY=1000
ARCHIVES_SECONDS=20
SOAK_SECONDS=600
SAMPLE_SECONDS=30
INCLUDE_CAP_MIB=1024
usage() { sed -n '2,67p' "$0"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --parts) PARTS="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --bin-dir) BIN_DIR="$2"; BUILD=0; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --keep) KEEP=1; shift ;;
        --conn-seconds) CONN_SECONDS="$2"; shift 2 ;;
        --many) MANY="$2"; shift 2 ;;
        --archives-seconds) ARCHIVES_SECONDS="$2"; shift 2 ;;
        --soak-seconds) SOAK_SECONDS="$2"; shift 2 ;;
        --sample-seconds) SAMPLE_SECONDS="$2"; shift 2 ;;
        --include-cap) INCLUDE_CAP_MIB="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "resolver-scale.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
for n in "$CONN_SECONDS" "$MANY" "$ARCHIVES_SECONDS" "$SOAK_SECONDS" "$SAMPLE_SECONDS" "$INCLUDE_CAP_MIB"; do
    case "$n" in '' | *[!0-9]*) echo "resolver-scale.sh: $n is not a whole number" >&2; exit 2 ;; esac
done
[ "$MANY" -ge 2 ] || { echo "resolver-scale.sh: --many must be at least 2" >&2; exit 2; }
[ "$SAMPLE_SECONDS" -ge 1 ] || { echo "resolver-scale.sh: --sample-seconds must be at least 1" >&2; exit 2; }
RUN_CONN=0 RUN_ARCH=0 RUN_SOAK=0
IFS=, read -r -a PART_LIST <<<"$PARTS"
for p in "${PART_LIST[@]}"; do
    case "$p" in
        connections) RUN_CONN=1 ;;
        archives) RUN_ARCH=1 ;;
        soak) RUN_SOAK=1 ;;
        *) echo "resolver-scale.sh: unknown part $p (connections, archives, soak)" >&2; exit 2 ;;
    esac
done

REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
umask 022
OUT="${OUT:-$REPO/bench/resolver-scale-results.md}"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac

log() { echo "resolver-scale.sh: $*" >&2; }
die() { log "$*"; exit 1; } # once the report is begun, also noted in it (below)

for tool in wrk curl python3; do
    command -v "$tool" >/dev/null || { log "$tool is needed"; exit 1; }
done

# 10,000 client connections, and fan-outs to 1,000 Archives: many descriptors.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
NOFILE="$(ulimit -n)"
NOFILE_HARD="$(ulimit -Hn)"

# shellcheck source=bench/lib/resolver.sh
. "$REPO/bench/lib/resolver.sh"
find_executables "$REPO" "$BUILD" "$BIN_DIR"

WORK="$(mktemp -d -t ibi-resolver-scale.XXXXXX)"
PIDS=()
ROWS="$WORK/rows.md"
DETAILS="$WORK/details.md"
: >"$ROWS"
: >"$DETAILS"
FAILED=0
COMPLETE=0
STARTED="$(date -u +%Y-%m-%dT%H:%MZ)"
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"

stop_pid() { # pid: TERM, then KILL after 5 s; forgets it
    local pid="$1" rest=() p
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    for p in "${PIDS[@]+"${PIDS[@]}"}"; do
        [ "$p" = "$pid" ] || rest+=("$p")
    done
    PIDS=("${rest[@]+"${rest[@]}"}")
}
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

# One row of the table; met is yes, no or — (reported only). A "no" fails the run.
row() { # check target measured met
    printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" >>"$ROWS"
    [ "$4" = no ] && FAILED=1
    log "$1: $3 — met: $4"
}
detail() { printf '%s\n' "$@" >>"$DETAILS"; }

# shellcheck disable=SC2317 # called from the EXIT trap
write_report() {
    {
        echo "## ibi-resolver at scale (bench/resolver-scale.sh)"
        echo
        echo "- $STARTED, $(nproc) CPUs, $(uname -r), $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
        echo "- $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2); python $(python3 -c 'import platform; print(platform.python_version())')"
        echo "- parts: $PARTS; descriptors (ulimit -n): $NOFILE (hard limit $NOFILE_HARD)"
        echo "- load average at start: $LOAD_START; at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "- everything on 127.0.0.1: the Archives, the resolver and the clients share the machine's CPUs"
        echo
        echo "| check | target | measured | met? |"
        echo "|---|---|---|---|"
        cat "$ROWS"
        if [ "$COMPLETE" != 1 ]; then
            echo "| the run | completes | stopped early (see the log) | no |"
        fi
        echo
        cat "$DETAILS"
    } >"$OUT"
}

# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    local rc=$?
    trap - EXIT
    stop_all
    [ "$COMPLETE" = 1 ] || FAILED=1
    write_report || true
    log "report: $OUT"
    if [ "$KEEP" = 1 ]; then log "logs kept in $WORK"; else rm -rf "$WORK"; fi
    if [ "$rc" = 0 ] && [ "$FAILED" = 1 ]; then rc=1; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { log "$*"; detail "" "**The run stopped:** $*"; exit 1; }

RESOLVER_IBI="J8LNKB5R7W/3FUQHC5"
SAMPLE_SERVICE="sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
KEY="1234567890"
EMAIL="bench@example.org"
HIT="8JMKD3MGP8W/35MME4E"   # sid.inpe.br/mtc-m18@80/2009/07.21.13.23, in sample-archive/
MISS="8JMKD3MGP8W/35MME4F"  # nobody's
MIB=1024                    # kB

status_of() { curl -s -o /dev/null -w '%{http_code}' "$1"; }
mem_of() { # pid -> "VmRSS VmHWM" in kB
    awk '/^VmRSS:/{r=$2} /^VmHWM:/{h=$2} END{print r+0, h+0}' "/proc/$1/status"
}
mib() { awk -v k="$1" 'BEGIN{printf "%.1f", k/1024}'; }
fds_of() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 | wc -l; }

# K Archives (ibi-archive serve) under dir: a0 holds the item -> ARCH_PORTS, ARCH_PIDS
start_archives() { # dir K
    local dir="$1" k="$2" i root port
    ARCH_PORTS=() ARCH_PIDS=()
    for i in $(seq 0 $((k - 1))); do
        root="$dir/a$i"
        mkdir -p "$root/col" "$root/var"
        [ "$i" = 0 ] && cp -r sample-archive/col/. "$root/col/"
        port="$(free_port)"
        ARCH_PORTS+=("$port")
        sed -e "s|^archiveserviceibi *=.*|archiveserviceibi = \"$(service_ibi "$i")\"|" \
            -e "s|^archiveaddress *=.*|archiveaddress    = \"127.0.0.1:$port\"|" \
            sample-archive/archive.toml >"$root/archive.toml"
        "$ARCHIVE_BIN" serve --root "$root" --listen "127.0.0.1:$port" --no-inclusion \
            --max-connections 4096 --max-per-client 4096 2>"$dir/a$i.log" >/dev/null &
        PIDS+=("$!")
        ARCH_PIDS+=("$!")
    done
    for i in $(seq 0 $((k - 1))); do
        wait_port "${ARCH_PORTS[$i]}" "${ARCH_PIDS[$i]}" "Archive $i"
    done
}

# A resolver in dir with extra TOML (sections) -> R_PORT R_PID R_URL
start_resolver() { # dir extra-toml
    local dir="$1"
    mkdir -p "$dir"
    R_PORT="$(free_port)"
    # The load comes from one client network standing for many readers: the bounds per
    # client out of its way, in the [limits] the case gives or one of their own.
    local per_client=$'per_client_resolutions = 100000\nper_client_misses = 1000000\nper_client_connections = 1000000'
    local extra="$2"
    if [[ $extra == *'[limits]'* ]]; then
        extra="${extra/\[limits\]/[limits]$'\n'$per_client}"
    else
        extra=$'[limits]\n'"$per_client"$'\n'"$extra"
    fi
    cat >"$dir/resolver.toml" <<EOF
serviceibi = "$RESOLVER_IBI"
publicurl = "http://127.0.0.1:$R_PORT"
listen = "127.0.0.1:$R_PORT"
database = "registry.sqlite"
$extra
EOF
    "$RESOLVER_BIN" serve --config "$dir/resolver.toml" 2>"$dir/resolver.log" &
    R_PID=$!
    PIDS+=("$R_PID")
    R_URL="http://127.0.0.1:$R_PORT"
    R_DIR="$dir"
    wait_port "$R_PORT" "$R_PID" "the resolver in $dir"
}

# Stops the resolver and starts it again on the same registry and port, so that each part
# measures a resolver started after the inclusions (each an argon2 check of the key, 19 MiB
# while it runs). Sets R_INCLUDED_MEM ("VmRSS VmHWM" before the restart).
restart_resolver() {
    R_INCLUDED_MEM="$(mem_of "$R_PID")"
    stop_pid "$R_PID"
    "$RESOLVER_BIN" serve --config "$R_DIR/resolver.toml" 2>>"$R_DIR/resolver.log" &
    R_PID=$!
    PIDS+=("$R_PID")
    wait_port "$R_PORT" "$R_PID" "the resolver in $R_DIR (restarted)"
}

# Registers and includes the K real Archives of archives-dir in the resolver of dir.
include_archives() { # resolver-dir archives-dir K
    local i out
    for i in $(seq 0 $(($3 - 1))); do
        echo "$KEY" | "$RESOLVER_BIN" register "$(service_ibi "$i")" --email "$EMAIL" \
            --config "$1/resolver.toml" >/dev/null
        out="$("$ARCHIVE_BIN" include --root "$2/a$i" --resolver "$R_URL/$RESOLVER_IBI")"
        case "$out" in
            *"confirmation successful"*) ;;
            *) die "Archive $i not included: $out" ;;
        esac
    done
    sleep 2.5 # the server reads the included Archives again every 2 s
}

# How many lines of a resolver log are not requests answered with the given statuses (nor
# its start, stop and inclusions), and the five most frequent of them (times, ports and
# counts in them masked).
log_others() { # log statuses-regex
    local re="\"GET [^\"]*\" ($2) |listening on|stopping|stopped|included at"
    local n
    n="$(grep -c -v -E "$re" "$1" || true)"
    printf '%s' "$n"
    if [ "$n" != 0 ]; then
        printf ', the most frequent: '
        grep -v -E "$re" "$1" | sed -E -e 's/^ibi-resolver: //' -e 's/[0-9]+(\.[0-9]+)?(ms|µs|s)\b/N\2/g' \
            -e 's/:[0-9]{4,5}\b/:PORT/g' -e 's/`/'"'"'/g' \
            | sort | uniq -c | sort -rn | head -5 \
            | awk '{n=$1; sub(/^ *[0-9]+ /, ""); printf "%s%s × `%s`", sep, n, $0; sep="; "}'
    fi
}

metric() { # metrics-file name-with-labels-prefix -> the sum of the matching samples
    awk -v p="$2" 'index($0, p) == 1 {s += $NF} END {printf "%d\n", s}' "$1"
}

# --- 1. 10,000 client connections ------------------------------------------------------
part_connections() {
    local D="$WORK/connections"
    mkdir -p "$D"
    log "connections: 4 Archives"
    start_archives "$D" 4
    local base
    base=$'[archives]\nnetworks = ["127.0.0.0/8"]\n[metrics]\nnetworks = ["127.0.0.0/8"]'

    # conn_case name limits-toml N seconds [reopen] -> $D/name.json, .metrics, resolver log
    conn_case() {
        local name="$1" n="$3" secs="$4" reopen="${5:-0}" s
        start_resolver "$D/$name" "$base"$'\n'"$2"
        include_archives "$D/$name" "$D" 4
        restart_resolver
        echo "$R_INCLUDED_MEM" >"$D/$name.included-mem"
        s="$(status_of "$R_URL/$HIT")"
        [ "$s" = 302 ] || die "$name: $R_URL/$HIT answered $s"
        log "connections/$name: $n connections, ${secs}s"
        python3 bench/conns.py "$R_PORT" "/$HIT" --connections "$n" --seconds "$secs" \
            --pid "$R_PID" --reopen "$reopen" >"$D/$name.json" 2>"$D/$name.err" \
            || die "$name: bench/conns.py failed: $(tail -3 "$D/$name.err")"
        sleep 1
        curl -s "$R_URL/metrics" >"$D/$name.metrics"
        mem_of "$R_PID" >"$D/$name.mem"
        stop_pid "$R_PID"
    }

    # held_check json -> "measured|met"
    held_check() {
        python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = d["connections"]
codes = {}
for part in (d["open_status"], d["load"]["status"]):
    for k, v in part.items():
        codes[k] = codes.get(k, 0) + v
other = {k: v for k, v in codes.items() if k not in ("302", "503")}
first_bad = {k: v for k, v in d["first"].items() if k != "answered"}
errs = {}
for part in (first_bad, d["open_errors"], d["load"]["errors"], d["after_errors"]):
    for k, v in part.items():
        errs[k] = errs.get(k, 0) + v
ok = d["held"] == n and d["held_end"] == n and not errs and not other
err_s = ", ".join(f"{k} {v}" for k, v in sorted(errs.items())) or "none"
other_s = ", ".join(f"{k}: {v}" for k, v in sorted(other.items())) or "0"
print(f"held {d['held']:,}/{n:,} (opened in {d['open_seconds']} s), {d['held_end']:,} to the end; "
      f"{d['load']['requests']:,} requests in {d['load']['seconds']:g} s ({d['load']['per_second']:,}/s) "
      f"+ {sum(d['open_status'].values()):,} while opening: 302 {codes.get('302', 0):,}, "
      f"503 {codes.get('503', 0):,}, other {other_s}; socket errors: {err_s}"
      f"|{'yes' if ok else 'no'}")
PY
    }
    mem_line() { # json -> "VmRSS a MiB / VmHWM b MiB held; peak VmRSS c MiB; fds d"
        python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h, p = d.get("at_held") or {}, d.get("peak") or {}
m = lambda k: f"{k / 1024:.1f}"  # noqa: E731
if not h:
    print("not read")
else:
    print(f"VmRSS {m(h['VmRSS'])} MiB, VmHWM {m(h['VmHWM'])} MiB, {h['fds']:,} descriptors once held; "
          f"under load VmRSS up to {m(p['VmRSS'])} MiB, VmHWM {m(p['VmHWM'])} MiB")
PY
    }

    local target="10,000 accepted and held; 0 socket errors; only 302 and 503"
    if [ "$NOFILE" -lt 20000 ]; then
        local why="ulimit -n is $NOFILE (hard limit $NOFILE_HARD), under the 20,000 needed: not run"
        row "10,000 connections, [limits] resolutions = 1024" "$target" "$why" no
        row "10,000 connections, [limits] resolutions = 10000" "$target" "$why" no
        detail "### 10,000 client connections" "" "Not run: $why." ""
    else
        local m1 m2 res
        conn_case default "" 10000 "$CONN_SECONDS"
        res="$(held_check "$D/default.json")"
        row "10,000 connections, [limits] resolutions = 1024 (default)" "$target" "${res%|*}" "${res##*|}"
        m1="$(mem_line "$D/default.json")"
        row "resolver memory with 10,000 connections held" "— (reported)" "$m1" "—"
        conn_case wide $'[limits]\nresolutions = 10000' 10000 "$CONN_SECONDS"
        res="$(held_check "$D/wide.json")"
        row "10,000 connections, [limits] resolutions = 10000" "$target (503 not expected)" "${res%|*}" "${res##*|}"
        m2="$(mem_line "$D/wide.json")"
        {
            echo "### 10,000 client connections"
            echo
            echo "One resolver in front of 4 \`ibi-archive serve\` Archives (Archive 0 holds $HIT,"
            echo "remembered after one warm-up request; the resolver restarted after the inclusions,"
            echo "see the 1,000 Archives part); \`bench/conns.py\` opens 10,000 connections"
            echo "(256 connecting at once), asks $HIT on each, keeps every answered one alive (a"
            echo "request every 4 s) until all have had an answer, then asks back to back for"
            echo "${CONN_SECONDS} s on every one (each answer within 10 s, else a timeout). 503 is the"
            echo "resolver's answer beyond [limits] resolutions under way; /metrics' overloaded counter"
            echo "agrees with the 503s counted by the client when nothing else answered 503."
            echo
            for c in default wide; do
                local mem_end mem_inc
                read -r -a mem_end <"$D/$c.mem"
                read -r -a mem_inc <"$D/$c.included-mem"
                echo "- **$c** ($( [ "$c" = default ] && echo 'resolutions = 1024' || echo 'resolutions = 10000')): $( [ "$c" = default ] && echo "$m1" || echo "$m2");"
                echo "  after the run VmRSS $(mib "${mem_end[0]}") MiB, VmHWM $(mib "${mem_end[1]}") MiB"
                echo "  (the resolver was restarted after including the 4 Archives, when it had VmRSS"
                echo "  $(mib "${mem_inc[0]}") MiB);"
                echo "  /metrics: overloaded $(metric "$D/$c.metrics" ibi_resolver_overloaded_total),"
                echo "  resolutions found $(metric "$D/$c.metrics" 'ibi_resolver_resolutions_total{outcome="found"}'),"
                echo "  not found $(metric "$D/$c.metrics" 'ibi_resolver_resolutions_total{outcome="not_found"}'),"
                echo "  Archive requests failed $(metric "$D/$c.metrics" 'ibi_resolver_archive_requests_total{archive="sid.inpe.br/mtc-m18@80/2008/03.17.15.17",result="failed"}')"
                echo "  / timed out $(metric "$D/$c.metrics" 'ibi_resolver_archive_requests_total{archive="sid.inpe.br/mtc-m18@80/2008/03.17.15.17",result="timed_out"}') (the holding Archive),"
                echo "  acknowledgments sent $(metric "$D/$c.metrics" 'ibi_resolver_acknowledgments_total{result="sent"}'),"
                echo "  failed $(metric "$D/$c.metrics" 'ibi_resolver_acknowledgments_total{result="failed"}'),"
                echo "  dropped $(metric "$D/$c.metrics" 'ibi_resolver_acknowledgments_total{result="dropped"}');"
                echo "  resolver log lines other than requests answered 302/503 and inclusions:"
                echo "  $(log_others "$D/$c/resolver.log" '302|503');"
                echo "  lines saying \"Too many open files\": $(grep -c 'Too many open files' "$D/$c/resolver.log" || true)"
                echo "  client: \`$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({k: d[k] for k in ("held","held_end","first","open_status","open_errors","after_errors","load")})' "$D/$c.json")\`"
            done
            echo
        } >>"$DETAILS"
    fi

    # Beyond [limits] connections.
    conn_case limit $'[limits]\nconnections = 1000' 1100 2 100
    res="$(python3 - "$D/limit.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f, r = d["first"], d.get("reopen", {})
ro = r.get("outcome", {})
refused = sum(f.get(k, 0) for k in ("eof", "reset", "write"))
again = sum(ro.get(k, 0) for k in ("eof", "reset", "write"))
ms = d["refused_close_ms_max"]
ok = (d["held"] == 1000 and f.get("answered") == 1000 and refused == 100 and not f.get("hung")
      and not f.get("connect") and ms is not None and ms <= 1000 and d["held_end"] == 1000
      and ro.get("answered") == r.get("closed") == 100 and again == 10 and not ro.get("hung"))
print(f"{d['held']:,} held; of the 100 beyond, {refused} closed "
      f"(end of file {f.get('eof', 0)}, reset {f.get('reset', 0)}, write {f.get('write', 0)}) "
      f"within {ms} ms, {f.get('hung', 0)} hung, {f.get('connect', 0)} not connected; "
      f"100 held ones closed, then {ro.get('answered', 0)} of {r.get('opened', 0)} new ones answered, "
      f"{again} closed within {r.get('refused_close_ms_max')} ms, {ro.get('hung', 0)} hung"
      f"|{'yes' if ok else 'no'}")
PY
)"
    row "connections beyond [limits] connections = 1000 (1,100 opened)" \
        "1,000 held; the 100 beyond closed within 1 s, none hung; room again once some close" "${res%|*}" "${res##*|}"
    {
        echo "Beyond the limit (\`[limits] connections = 1000\`, 1,100 connections, then 100 held ones"
        echo "closed and 110 opened): the resolver's log says"
        echo "\`$(grep -m1 'connections open' "$D/limit/resolver.log" || echo 'nothing of it')\`;"
        echo "client: \`$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({k: d.get(k) for k in ("held","first","refused_close_ms_max","held_end","reopen")})' "$D/limit.json")\`."
        echo
    } >>"$DETAILS"
    stop_all
}

# --- 2. 1,000 registered Archives -------------------------------------------------------
part_archives() {
    local D="$WORK/archives" n_peers=$((MANY - 1)) half i
    mkdir -p "$D"
    log "archives: 1 Archive and $n_peers peers (bench/peer.py many)"
    start_archives "$D" 1
    half=$((n_peers / 2))
    : >"$D/peers.txt"
    local counts=("$half" $((n_peers - half)))
    for i in 0 1; do
        [ "${counts[$i]}" -gt 0 ] || continue
        python3 bench/peer.py many 0 "${counts[$i]}" >"$D/peer$i.out" 2>"$D/peer$i.err" &
        PIDS+=("$!")
        local pid=$! ok=0
        for _ in $(seq 1 600); do
            if grep -qx ready "$D/peer$i.out"; then ok=1; break; fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        [ "$ok" = 1 ] || die "bench/peer.py many did not start: $(tail -3 "$D/peer$i.err")"
        grep -v -x ready "$D/peer$i.out" >>"$D/peers.txt"
    done
    [ "$(wc -l <"$D/peers.txt")" = "$n_peers" ] || die "the peers listen on $(wc -l <"$D/peers.txt") ports, not $n_peers"

    start_resolver "$D/r" $'[archives]\ntimeout = "10s"\nnetworks = ["127.0.0.0/8"]\ndormant_after = 0\n[metrics]\nnetworks = ["127.0.0.0/8"]'
    log "archives: registering $MANY Archives"
    local t0=$SECONDS
    include_archives "$D/r" "$D" 1
    i=1
    : >"$D/inclusions.txt"
    while read -r port; do
        echo "$KEY" | "$RESOLVER_BIN" register "$(service_ibi "$i")" --email "$EMAIL" \
            --config "$D/r/resolver.toml" >/dev/null
        echo "$(service_ibi "$i") $port" >>"$D/inclusions.txt"
        i=$((i + 1))
    done <"$D/peers.txt"
    # Should each inclusionRequest leave the resolver larger (the argon2 check, 19 MiB, kept
    # by the allocator), 1,000 of them could exhaust the machine: the resolver is restarted
    # whenever it passes INCLUDE_CAP_MIB, and the growth is measured over the first stretch.
    log "archives: including $n_peers peers (the resolver restarted at every ${INCLUDE_CAP_MIB} MiB)"
    local done_n=0 rc restarts=0 first_growth="" hwm_max=0 first_start_rss
    read -r first_start_rss _ <<<"$(mem_of "$R_PID")"
    : >"$D/include-rss.txt"
    # Includes the Archives listed in a file ("service port" lines) one after the other;
    # prints "included start-VmRSS VmRSS VmHWM" (kB); exit 3 when VmRSS passed the cap.
    cat >"$D/include.py" <<'PY'
import sys, urllib.parse, urllib.request
url, key, email, pid, cap, listing, trace = sys.argv[1:]
trace = open(trace, "a")
def rss():
    with open(f"/proc/{pid}/status") as f:
        v = {l.split(":")[0]: int(l.split()[1]) for l in f if l.startswith(("VmRSS", "VmHWM"))}
    return v["VmRSS"], v["VmHWM"]
start = rss()[0]
n = 0
for line in open(listing):
    service, port = line.split()
    q = urllib.parse.urlencode({
        "servicesubject": "inclusionRequest", "archiveaddress": f"127.0.0.1:{port}",
        "archiveserviceibi": service, "archiveip": "127.0.0.1", "archiveprotocol": "HTTP",
        "archiveplatformversion": "1", "archiveadmemailaddress": email, "registrationkey": key})
    with urllib.request.urlopen(f"{url}?{q}", timeout=60) as r:
        body = r.read().decode()
    if "confirmation successful" not in body:
        print(n, start, *rss(), f"{service}: {' '.join(body.split())}")
        sys.exit(1)
    n += 1
    now, hwm = rss()
    print(now, file=trace, flush=True)
    if now > int(cap):
        print(n, start, now, hwm)
        sys.exit(3)
print(n, start, *rss())
PY
    while [ "$done_n" -lt "$n_peers" ]; do
        rc=0
        tail -n +$((done_n + 1)) "$D/inclusions.txt" >"$D/remaining.txt"
        python3 "$D/include.py" "$R_URL/$RESOLVER_IBI" "$KEY" "$EMAIL" "$R_PID" \
            $((INCLUDE_CAP_MIB * MIB)) "$D/remaining.txt" "$D/include-rss.txt" \
            >"$D/included.txt" 2>"$D/include.err" || rc=$?
        local n="" s_rss e_rss e_hwm rest
        read -r n s_rss e_rss e_hwm rest <"$D/included.txt" || true
        if [ -z "$n" ] || { [ "$rc" != 0 ] && [ "$rc" != 3 ]; }; then
            die "inclusion of the peers failed: $(cat "$D/included.txt") $(tail -3 "$D/include.err")"
        fi
        done_n=$((done_n + n))
        [ "$e_hwm" -gt "$hwm_max" ] && hwm_max="$e_hwm"
        [ -n "$first_growth" ] || first_growth="$n $s_rss $e_rss"
        if [ "$rc" = 3 ] && [ "$done_n" -lt "$n_peers" ]; then
            restart_resolver
            restarts=$((restarts + 1))
        fi
    done
    local took=$((SECONDS - t0))
    sleep 2.5
    # The resolver measured from here on starts with the 1,000 Archives in its registry.
    restart_resolver
    sleep 3
    local included dormant
    included="$("$RESOLVER_BIN" archives --csv --config "$D/r/resolver.toml" 2>/dev/null | awk -F, 'NR > 1 && $3 == "yes"' | wc -l)"
    dormant="$("$RESOLVER_BIN" archives --csv --config "$D/r/resolver.toml" 2>/dev/null | awk -F, 'NR > 1 && $7 == "yes"' | wc -l)"
    log "archives: $included included ($dormant dormant) in ${took}s, $restarts restarts"
    [ "$included" = "$MANY" ] || die "archives: $included Archives included, not $MANY"
    local g_n g_s g_e growth curve
    read -r g_n g_s g_e <<<"$first_growth"
    growth="$(awk -v n="$g_n" -v a="$g_s" -v b="$g_e" 'BEGIN{printf "%.1f", n ? (b-a)/n/1024 : 0}')"
    # VmRSS after 1, 2, 5, 10, 20, 50, … peers included (and the last), from the trace.
    curve="$(awk -v r="$restarts" '
        {n++; v[n]=$1}
        END {
            split("1 2 5 10 20 30 50 100 200 500 1000 2000 5000", at, " ")
            for (i = 1; i in at; i++) if (at[i] < n) {printf "%s%d: %.1f", sep, at[i], v[at[i]]/1024; sep=", "}
            printf "%s%d: %.1f", sep, n, v[n]/1024
        }' "$D/include-rss.txt")"
    local met=no
    [ "$hwm_max" -le $((64 * MIB)) ] && met=yes
    local restarted=""
    [ "$restarts" = 0 ] || restarted=" (restarted $restarts times at ${INCLUDE_CAP_MIB} MiB)"
    row "resident memory while including $MANY Archives" "≤ 64 MiB (VmHWM)" \
        "VmHWM $(mib "$hwm_max") MiB$restarted; VmRSS $(mib "$first_start_rss") MiB with the first Archive, then after N more (N: MiB) $curve" "$met"
    local s
    s="$(status_of "$R_URL/$HIT")"; [ "$s" = 302 ] || die "archives: $HIT answered $s"
    s="$(status_of "$R_URL/$MISS")"; [ "$s" = 404 ] || die "archives: $MISS answered $s"
    sleep 2
    local m_idle m_miss m_hit fds_miss
    m_idle="$(mem_of "$R_PID")"

    # wrk_lat url threads conns secs -> W_RPS W_P50 W_P99 W_N W_NON3XX W_ERR (ms for latencies)
    wrk_lat() {
        local outp
        outp="$(wrk -t"$2" -c"$3" -d"$4s" --timeout 30s --latency "$1")"
        echo "$outp" >>"$D/wrk.txt"
        W_RPS="$(echo "$outp" | awk '/Requests\/sec/{print $2}')"
        W_P50="$(echo "$outp" | awk '$1=="50%"{print $2}')"
        W_P99="$(echo "$outp" | awk '$1=="99%"{print $2}')"
        W_N="$(echo "$outp" | awk '/requests in/{print $1}')"
        W_NON3XX="$(echo "$outp" | awk '/Non-2xx or 3xx/{print $NF}')"
        W_NON3XX="${W_NON3XX:-0}"
        W_ERR="$(echo "$outp" | awk '/Socket errors/{print $3+$5+$7+$9}' | tr -d ',')"
        W_ERR="${W_ERR:-0}"
    }
    curl -s "$R_URL/metrics" >"$D/metrics.0"
    log "archives: misses, -c1 then -c16, ${ARCHIVES_SECONDS}s each"
    wrk_lat "$R_URL/$MISS" 1 1 "$ARCHIVES_SECONDS"
    local c1_p50="$W_P50" c1_p99="$W_P99" c1_rps="$W_RPS" c1_n="$W_N" c1_err="$W_ERR" c1_non="$W_NON3XX"
    wrk_lat "$R_URL/$MISS" 2 16 "$ARCHIVES_SECONDS"
    local c16_p50="$W_P50" c16_p99="$W_P99" c16_rps="$W_RPS" c16_n="$W_N" c16_err="$W_ERR" c16_non="$W_NON3XX"
    sleep 2
    m_miss="$(mem_of "$R_PID")"
    fds_miss="$(fds_of "$R_PID")"
    curl -s "$R_URL/metrics" >"$D/metrics.1"
    log "archives: remembered hits, -c16, ${ARCHIVES_SECONDS}s"
    wrk_lat "$R_URL/$HIT" 2 16 "$ARCHIVES_SECONDS"
    local h_rps="$W_RPS" h_p50="$W_P50" h_p99="$W_P99" h_n="$W_N" h_err="$W_ERR" h_non="$W_NON3XX"
    sleep 2
    m_hit="$(mem_of "$R_PID")"
    curl -s "$R_URL/metrics" >"$D/metrics.2"
    log "archives: 35 s idle (the resolver keeps idle connections to Archives 30 s)"
    sleep 35
    local m_quiet fds_quiet r_quiet h_quiet
    m_quiet="$(mem_of "$R_PID")"
    fds_quiet="$(fds_of "$R_PID")"
    read -r r_quiet h_quiet <<<"$m_quiet"

    local r_idle h_idle r_miss h_miss r_hit h_hit
    read -r r_idle h_idle <<<"$m_idle"
    read -r r_miss h_miss <<<"$m_miss"
    read -r r_hit h_hit <<<"$m_hit"
    met=no
    [ "$h_quiet" -le $((64 * MIB)) ] && met=yes
    row "resident memory, $MANY registered Archives (restarted after the inclusions)" "≤ 64 MiB (VmHWM, the peak)" \
        "VmHWM $(mib "$h_quiet") MiB; VmRSS $(mib "$r_idle") MiB idle, $(mib "$r_miss") after the misses, $(mib "$r_hit") after the hits, $(mib "$r_quiet") 35 s later" "$met"
    # Archive requests per miss, from /metrics (the misses' window: metrics.0 -> metrics.1).
    local asked0 asked1 nf0 nf1 failed0 failed1 per_miss
    asked0="$(metric "$D/metrics.0" ibi_resolver_archive_requests_total)"
    asked1="$(metric "$D/metrics.1" ibi_resolver_archive_requests_total)"
    failed0="$(awk '/^ibi_resolver_archive_requests_total/ && !/result="answered"/ {s+=$NF} END{printf "%d", s}' "$D/metrics.0")"
    failed1="$(awk '/^ibi_resolver_archive_requests_total/ && !/result="answered"/ {s+=$NF} END{printf "%d", s}' "$D/metrics.1")"
    nf0="$(metric "$D/metrics.0" 'ibi_resolver_resolutions_total{outcome="not_found"}')"
    nf1="$(metric "$D/metrics.1" 'ibi_resolver_resolutions_total{outcome="not_found"}')"
    per_miss="$(awk -v a=$((asked1 - asked0)) -v n=$((nf1 - nf0)) 'BEGIN{printf "%.1f", n ? a/n : 0}')"
    met=yes
    { [ "$c1_err" = 0 ] && [ "$c16_err" = 0 ] && [ "$c1_non" = "$c1_n" ] && [ "$c16_non" = "$c16_n" ] \
        && [ $((failed1 - failed0)) = 0 ]; } || met=no
    row "misses with $MANY Archives: each asks all, answers 404" \
        "404 only, 0 socket errors, no Archive request failed" \
        "$((c1_n + c16_n)) misses, $((c1_non + c16_non)) not 2xx/3xx, $((c1_err + c16_err)) socket errors; $per_miss Archive requests per miss, $((failed1 - failed0)) failed or timed out" "$met"
    row "miss latency, $MANY Archives" "— (reported)" \
        "-c1: p50 $c1_p50, p99 $c1_p99 ($c1_rps/s); -t2 -c16: p50 $c16_p50, p99 $c16_p99 ($c16_rps/s)" "—"
    {
        echo "### $MANY registered Archives"
        echo
        echo "One resolver (\`[archives] timeout = \"10s\"\`, \`dormant_after = 0\`: every miss asks"
        echo "every Archive, none is set aside) with $MANY Archives registered and included: one"
        echo "\`ibi-archive serve\` holding $HIT (\`ibi-archive include\`) and $n_peers answering \"not"
        echo "here\" at once (\`bench/peer.py many\`, two processes, included by their"
        echo "inclusionRequest, one after the other); registering and including took ${took} s."
        echo "While including (each an argon2id check of the registration key, 19 MiB while it"
        echo "runs): VmRSS $(mib "$first_start_rss") MiB once the first"
        echo "Archive was included; after N more, N: MiB: $curve; +$growth MiB per"
        echo "inclusion on average over the first $g_n). The resolver is restarted whenever its VmRSS"
        echo "passes ${INCLUDE_CAP_MIB} MiB (--include-cap; $restarts times here), and once more after the"
        echo "inclusions: the figures below are of that last process, with the $MANY Archives read"
        echo "from its registry (\`ibi-resolver archives\`: $included included, $dormant dormant)."
        echo "wrk --latency --timeout 30s, ${ARCHIVES_SECONDS} s per run:"
        echo
        echo "| run | requests | req/s | p50 | p99 | not 2xx/3xx | socket errors | VmRSS after | VmHWM after |"
        echo "|---|---|---|---|---|---|---|---|---|"
        echo "| idle, restarted after including | - | - | - | - | - | - | $(mib "$r_idle") MiB | $(mib "$h_idle") MiB |"
        echo "| miss -t1 -c1 | $c1_n | $c1_rps | $c1_p50 | $c1_p99 | $c1_non | $c1_err | | |"
        echo "| miss -t2 -c16 | $c16_n | $c16_rps | $c16_p50 | $c16_p99 | $c16_non | $c16_err | $(mib "$r_miss") MiB | $(mib "$h_miss") MiB |"
        echo "| remembered -t2 -c16 | $h_n | $h_rps | $h_p50 | $h_p99 | $h_non | $h_err | $(mib "$r_hit") MiB | $(mib "$h_hit") MiB |"
        echo "| idle 35 s later ($fds_quiet descriptors) | - | - | - | - | - | - | $(mib "$r_quiet") MiB | $(mib "$h_quiet") MiB |"
        echo
        echo "Over the misses: $((asked1 - asked0)) Archive requests for $((nf1 - nf0)) misses ($per_miss each),"
        echo "$((failed1 - failed0)) of them failed or timed out; the resolver held $fds_miss descriptors after"
        echo "them (idle connections to the Archives are kept 30 s, at most 32 to each)."
        echo "/metrics at the end: $(grep -E '^ibi_resolver_(resolutions_total|location_memory_total|acknowledgments_total|overloaded_total)' "$D/metrics.2" | tr '\n' ';' | sed 's/;$//; s/;/; /g')."
        echo
    } >>"$DETAILS"
    stop_all
}

# --- 3. the soak ------------------------------------------------------------------------
part_soak() {
    local D="$WORK/soak" K=10
    mkdir -p "$D"
    log "soak: $K Archives"
    start_archives "$D" "$K"
    start_resolver "$D/r" $'[archives]\nnetworks = ["127.0.0.0/8"]\n[metrics]\nnetworks = ["127.0.0.0/8"]'
    include_archives "$D/r" "$D" "$K"
    restart_resolver
    local s
    s="$(status_of "$R_URL/$HIT")"; [ "$s" = 302 ] || die "soak: $HIT answered $s"
    cat >"$D/mix.lua" <<EOF
-- The soak's mix, one path after the other per connection; answers counted by status.
local paths = {
  "/$HIT",               -- remembered: 302
  "/$MISS",              -- nobody's: 404 after asking every Archive
  "/$HIT?noredirect",    -- the inspection view: 200
  "/%zz",                -- malformed: 400
}
local threads = {}
function setup(thread)
  table.insert(threads, thread)
end
function init(args)
  counts = {}
  i = 0
end
function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end
function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for code, n in pairs(t:get("counts")) do
      total[code] = (total[code] or 0) + n
    end
  end
  for code, n in pairs(total) do
    io.write(string.format("status %d %d\n", code, n))
  end
  local e = summary.errors
  io.write(string.format("errors connect %d read %d write %d timeout %d\n",
    e.connect, e.read, e.write, e.timeout))
end
EOF
    log "soak: wrk -t2 -c16 for ${SOAK_SECONDS}s, VmRSS every ${SAMPLE_SECONDS}s"
    wrk -t2 -c16 -d"${SOAK_SECONDS}s" --timeout 10s --latency -s "$D/mix.lua" "$R_URL" >"$D/wrk.txt" 2>&1 &
    local wrk_pid=$!
    PIDS+=("$wrk_pid")
    local t0=$SECONDS elapsed next=0 samples=() times=()
    while kill -0 "$wrk_pid" 2>/dev/null && [ $((SECONDS - t0)) -le $((SOAK_SECONDS + 60)) ]; do
        elapsed=$((SECONDS - t0))
        if [ "$elapsed" -ge "$next" ]; then
            local r
            read -r r _ <<<"$(mem_of "$R_PID")"
            samples+=("$r")
            times+=("$elapsed")
            next=$((next + SAMPLE_SECONDS))
        fi
        sleep 1
    done
    wait "$wrk_pid" || true
    stop_pid "$wrk_pid"
    sleep 2 # the last acknowledgments
    local r_end h_end
    read -r r_end h_end <<<"$(mem_of "$R_PID")"
    samples+=("$r_end")
    times+=("$((SECONDS - t0))")
    curl -s "$R_URL/metrics" >"$D/metrics"
    grep -q 'requests in' "$D/wrk.txt" || die "soak: wrk did not report: $(tail -3 "$D/wrk.txt")"

    local codes five other503 err_total rps n
    codes="$(awk '/^status /{printf "%s%s: %s", sep, $2, $3; sep=", "}' "$D/wrk.txt")"
    five="$(awk '/^status 5/ && $2 != 503 {s+=$3} END{printf "%d", s}' "$D/wrk.txt")"
    other503="$(awk '/^status 503 /{s+=$3} END{printf "%d", s}' "$D/wrk.txt")"
    err_total="$(awk '/^errors /{print $3+$5+$7+$9}' "$D/wrk.txt")"
    err_total="${err_total:-0}"
    rps="$(awk '/Requests\/sec/{print $2}' "$D/wrk.txt")"
    n="$(awk '/requests in/{print $1}' "$D/wrk.txt")"
    local met=yes
    [ "$five" = 0 ] || met=no
    row "soak ${SOAK_SECONDS} s: 5xx other than 503" "0" "$five (of $n answers: $codes)" "$met"
    met=yes
    [ "$err_total" = 0 ] || met=no
    row "soak ${SOAK_SECONDS} s: socket errors" "0" "$err_total ($(grep '^errors ' "$D/wrk.txt" | cut -d' ' -f2-))" "$met"

    local flat
    # The warm-up: 60 s, or half the soak when it is shorter than 2 minutes.
    local warm=60
    [ "$SOAK_SECONDS" -ge 120 ] || warm=$((SOAK_SECONDS / 2))
    flat="$(python3 - "$warm" "${times[*]}" "${samples[*]}" <<'PY'
import sys
warm = int(sys.argv[1])
times = [int(t) for t in sys.argv[2].split()]
rss = [int(r) for r in sys.argv[3].split()]
base_i = next((i for i, t in enumerate(times) if t >= warm), len(times) - 1)
after = rss[base_i:]
grew = len(after) >= 4 and all(b > a for a, b in zip(after, after[1:]))
within = rss[-1] - rss[base_i] <= 4096
ok = within and not grew
print(f"{rss[base_i] / 1024:.1f} MiB at {times[base_i]} s -> {rss[-1] / 1024:.1f} MiB at the end "
      f"({(rss[-1] - rss[base_i]) / 1024:+.1f} MiB; {len(after)} samples from there"
      f"{', growing at every one' if grew else ''})|{'yes' if ok else 'no'}")
PY
)"
    row "soak ${SOAK_SECONDS} s: resolver memory flat" \
        "last VmRSS ≤ the sample at ${warm} s + 4 MiB, no growth at every sample" "${flat%|*}" "${flat##*|}"
    local sent failed dropped
    sent="$(metric "$D/metrics" 'ibi_resolver_acknowledgments_total{result="sent"}')"
    failed="$(metric "$D/metrics" 'ibi_resolver_acknowledgments_total{result="failed"}')"
    dropped="$(metric "$D/metrics" 'ibi_resolver_acknowledgments_total{result="dropped"}')"
    met=yes
    [ "$dropped" = 0 ] || met=no
    row "soak ${SOAK_SECONDS} s: acknowledgments dropped (/metrics)" "0" "$dropped (sent $sent, failed $failed)" "$met"
    {
        echo "### Soak"
        echo
        echo "One resolver in front of $K \`ibi-archive serve\` Archives (Archive 0 holds $HIT);"
        echo "\`wrk -t2 -c16 -d${SOAK_SECONDS}s --timeout 10s\` rotating /$HIT (remembered, 302), /$MISS"
        echo "(404 after asking all $K), /$HIT?noredirect (200) and /%zz (400): $n answers, $rps/s"
        echo "($codes; 503: $other503). Latency: $(awk '/^    Latency /{print "mean " $2 ", max " $4}' "$D/wrk.txt");"
        echo "p50 $(awk '$1=="50%"{print $2}' "$D/wrk.txt"), p99 $(awk '$1=="99%"{print $2}' "$D/wrk.txt")."
        echo
        echo "Memory is *flat* when the last VmRSS sample (taken 2 s after wrk ends) is within 4 MiB"
        echo "of the first sample at or after ${warm} s (the warm-up: 60 s, or half a soak shorter than"
        echo "2 minutes), and the samples from there on do not rise at every step (judged when there"
        echo "are 4 or more). VmRSS samples (s: MiB), every ${SAMPLE_SECONDS} s from wrk's start:"
        echo "$(python3 -c 'import sys; print(", ".join(f"{t}: {int(r)/1024:.1f}" for t, r in zip(sys.argv[1].split(), sys.argv[2].split())))' \
            "${times[*]}" "${samples[*]}"); VmHWM at the end $(mib "$h_end") MiB."
        echo
        echo "/metrics at the end:"
        echo
        echo '```'
        grep -E '^ibi_resolver_(resolutions_total|location_memory_total|acknowledgments_total|overloaded_total)' "$D/metrics" || true
        echo "archive requests not answered (failed or timed out): $(awk '/^ibi_resolver_archive_requests_total/ && !/result="answered"/ {s+=$NF} END{printf "%d", s}' "$D/metrics")"
        echo '```'
        echo
        echo "Misses during which an Archive did not answer (the resolver's log: \"not found ($K asked,"
        echo "N did not answer)\" with N > 0): $(grep -c -E ', [1-9][0-9]* did not answer' "$D/r/resolver.log" || true)."
        echo "Resolver log lines other than requests answered 200, 302, 400 or 404 and inclusions:"
        echo "$(log_others "$D/r/resolver.log" '200|302|400|404')."
        echo
    } >>"$DETAILS"
    stop_all
}

[ "$RUN_CONN" = 1 ] && part_connections
[ "$RUN_ARCH" = 1 ] && part_archives
[ "$RUN_SOAK" = 1 ] && part_soak
COMPLETE=1
exit 0
