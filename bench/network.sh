#!/usr/bin/env bash
# The IBI network at scale: one real resolver (`ibi-resolver serve`, release build) in front
# of N fake Archives that hold, move, delete, lose and lie about items, asked by readers
# who check every answer against what the simulation knows. Writes a markdown report
# (default bench/network-results.md) and prints it.
#
#   bench/network.sh [--archives 100] [--duration 60] [--requests 0] [--connections 16]
#                    [--items 300] [--timeout 2] [--flap 3] [--zipf 1.0] [--seed 1]
#                    [--out FILE] [--no-build] [--keep]
#
# A default run takes about a minute and a half: ~10 s of setup, --duration seconds of
# readers, a few seconds for the last requests to arrive.
#
#  1. builds `ibi-resolver` and the example `netsim` (bench/netsim.rs) in release
#     (--no-build: those already in the target directory);
#  2. starts netsim: N Archives (--archives) in one process, each on its own port of
#     127.0.0.1 with its own prefix (service IBI archives.test/aKKK/2020/01.01.00.00, items
#     archives.test/aKKK/2021/…, so that an item's "home" is the Archive whose service IBI
#     codes the same host), speaking the Archive protocol: urlRequest (an empty answer when
#     it does not hold the IBI, else the pair list of an Original, of a tombstone, or of the
#     item without the file asked for), acknowledgment, inclusionConfirmationRequest.
#     Of the N: 5 down (included, then closed: connections refused), 2 flapping (closed
#     and reopened on the same port every --flap seconds, out of phase), 1 hostile
#     (claims the Original of every IBI and file path, with a URL of its own), 1 slow
#     (answers right after 0.8 × the resolver's timeout), the rest healthy. Each Archive
#     but the hostile mints --items items: ~3 % tombstones, ~8 % moved to another healthy
#     Archive (20 % of a down Archive's), the rest held at home;
#  3. starts one resolver: [archives] networks = ["127.0.0.0/8"], timeout --timeout,
#     dormant_after 5; [limits] per client raised (every reader is one machine);
#     trustedproxies = ["127.0.0.1/32"], so that each reader request's
#     X-Forwarded-For: 10.a.b.c (its sequence number) reaches the Archives as
#     clientinformation.ipaddress and every Archive request is counted against the
#     resolution that made it;
#  4. registers every Archive (`ibi-resolver register`, the key on stdin) and includes it
#     (the resolver service's inclusionRequest, as an Archive sends it; the fake answers
#     the confirmation), checks that all N are included, waits for the server to read them;
#  5. netsim then closes the down Archives, starts the flapping ones, and runs
#     --connections readers back to back for --duration seconds (or --requests requests):
#     each draws a class by weight, then an IBI of the class by Zipf's law (--zipf):
#       held               an item at its healthy home           302 to it
#       held-at-slow       an item at the slow Archive           302 to it
#       held-at-down       an item at a down Archive             503
#       held-at-flapping   an item at a flapping Archive         302 to it or 503 (split reported)
#       moved              minted at A, held only by B           302 to B
#       moved-down-home    the same, A down                      302 to B
#       unknown-live-home  nobody's, prefix of a healthy one     404
#       unknown-down-home  nobody's, prefix of a down one        503
#       unknown-no-home    nobody's, prefix of no Archive        404
#       tombstone          its only holder says state Deleted    410
#       path               <held item>/nonexistent.pdf           404 (never the hostile's URL)
#     A redirect to the hostile is wrong, except for an IBI whose home was down and that
#     had not been asked before in the run (not remembered): those are counted apart
#     ("hostile wins, home down": the standard's first-answer rule). The expected answers
#     are the resolver's contract after the rework under way: today's resolver gets some
#     classes wrong, and the report says so;
#  6. the report: per class the resolutions, right and wrong answers (what each class got,
#     and examples of the wrong ones), the Archives' urlRequests per resolution for first
#     asks and for IBIs asked before (targets: ≤ 2 for an item's first ask at its home,
#     ≤ 1.1 for a held item asked before), p50 and p99; the flapping homes' split; totals;
#     and what the resolver's /metrics counted.
#
# Needs curl, python3 (and cargo with the build). Only 127.0.0.1 is used. Every process
# started (netsim, the resolver) is stopped by its PID on exit, failure included. --keep
# leaves the logs, the registry and the resolver.toml in the temporary directory it names.
set -euo pipefail

ARCHIVES=100
DURATION=60
REQUESTS=0
CONNS=16
ITEMS=300
TIMEOUT_S=2
FLAP_S=3
ZIPF=1.0
SEED=1
OUT=""
BUILD=1
KEEP=0
ARGS_GIVEN="$*"
while [ $# -gt 0 ]; do
    case "$1" in
        --archives) ARCHIVES="$2"; shift 2 ;;
        --duration) DURATION="$2"; shift 2 ;;
        --requests) REQUESTS="$2"; shift 2 ;;
        --connections) CONNS="$2"; shift 2 ;;
        --items) ITEMS="$2"; shift 2 ;;
        --timeout) TIMEOUT_S="$2"; shift 2 ;;
        --flap) FLAP_S="$2"; shift 2 ;;
        --zipf) ZIPF="$2"; shift 2 ;;
        --seed) SEED="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --keep) KEEP=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "network.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

log() { echo "network.sh: $*" >&2; }
die() { log "$*"; exit 1; }
usage_error() { echo "network.sh: $*" >&2; exit 2; }

is_count() { case "$1" in '' | *[!0-9]*) return 1 ;; *) [ "$1" -ge "$2" ] ;; esac; }
is_count "$ARCHIVES" 12 || usage_error "--archives takes a number >= 12 (5 down, 2 flapping, a hostile, a slow one and healthy ones)"
is_count "$DURATION" 1 || usage_error "--duration takes whole seconds (>= 1)"
is_count "$REQUESTS" 0 || usage_error "--requests takes a number (0: no bound)"
is_count "$CONNS" 1 || usage_error "--connections takes a number >= 1"
is_count "$ITEMS" 10 || usage_error "--items takes a number >= 10"
is_count "$TIMEOUT_S" 1 || usage_error "--timeout takes whole seconds (>= 1)"
is_count "$FLAP_S" 1 || usage_error "--flap takes whole seconds (>= 1)"
is_count "$SEED" 0 || usage_error "--seed takes a number"
case "$ZIPF" in '' | *[!0-9.]*) usage_error "--zipf takes a number" ;; esac

CALLER_DIR="$PWD" # --out is relative to it
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
OUT="${OUT:-$REPO/bench/network-results.md}"
case "$OUT" in /*) ;; *) OUT="$CALLER_DIR/$OUT" ;; esac

needed=(rustc curl python3)
[ "$BUILD" = 1 ] && needed+=(cargo)
for tool in "${needed[@]}"; do
    command -v "$tool" >/dev/null || die "$tool is needed"
done

# A fan-out is N connections to Archives, and the fakes hold as many: many descriptors.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# free_port, wait_port, resolver_toml, stop_pid, stop_all, forget_pid
# shellcheck source=bench/lib/resolver.sh
. "$REPO/bench/lib/resolver.sh"

if [ "$BUILD" = 1 ]; then
    log "building (release)"
    cargo build --release -p ibi-resolver --bin ibi-resolver --example netsim >&2
fi
TARGET="${CARGO_TARGET_DIR:-$REPO/target}"
case "$TARGET" in /*) ;; *) TARGET="$REPO/$TARGET" ;; esac
BIN_DIR="$TARGET/$(rustc -vV | sed -n 's/^host: //p')/release"
RESOLVER_BIN="$BIN_DIR/ibi-resolver"
NETSIM_BIN="$BIN_DIR/examples/netsim"
for exe in "$RESOLVER_BIN" "$NETSIM_BIN"; do
    [ -x "$exe" ] || die "$exe is missing (cargo build --release -p ibi-resolver --bin ibi-resolver --example netsim)"
done

WORK="$(mktemp -d -t ibi-network.XXXXXX)"
PIDS=()   # every process started, stopped by PID
PGIDS=()  # none here; bench/lib/resolver.sh's stop_pid reads it
cleanup() {
    stop_all
    if [ "$KEEP" = 1 ]; then log "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

RESOLVER_IBI="J8LNKB5R7W/3FUQHC5"
KEY="1234567890"
DORMANT_AFTER=5
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"
STARTED="$(date -u '+%Y-%m-%d %H:%M UTC')"

# --- the Archives ----------------------------------------------------------------------
R_PORT="$(free_port)"
"$NETSIM_BIN" --resolver "127.0.0.1:$R_PORT" --listed "$WORK/archives.txt" --go "$WORK/go" \
    --out "$WORK/body.md" --archives "$ARCHIVES" --items "$ITEMS" --connections "$CONNS" \
    --duration "$DURATION" --requests "$REQUESTS" --timeout-ms "$((TIMEOUT_S * 1000))" \
    --flap-ms "$((FLAP_S * 1000))" --zipf "$ZIPF" --seed "$SEED" \
    >"$WORK/netsim.out" 2>"$WORK/netsim.log" &
NETSIM_PID=$!
PIDS+=("$NETSIM_PID")
for _ in $(seq 1 600); do
    grep -qx ready "$WORK/netsim.out" 2>/dev/null && break
    kill -0 "$NETSIM_PID" 2>/dev/null || { cat "$WORK/netsim.log" >&2; die "netsim ended before it was ready"; }
    sleep 0.05
done
grep -qx ready "$WORK/netsim.out" || die "netsim is not ready after 30 s"
log "$ARCHIVES Archives listening ($(awk '{print $3}' "$WORK/archives.txt" | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}'))"

# --- the resolver ----------------------------------------------------------------------
mkdir -p "$WORK/resolver"
resolver_toml "$R_PORT" "http://127.0.0.1:$R_PORT" registry.sqlite \
    '# The readers are one machine: X-Forwarded-For names each resolution (see netsim.rs).
trustedproxies = ["127.0.0.1/32"]' "" >"$WORK/resolver/resolver.toml"
"$RESOLVER_BIN" serve --config "$WORK/resolver/resolver.toml" 2>"$WORK/resolver/resolver.log" &
RESOLVER_PID=$!
PIDS+=("$RESOLVER_PID")
wait_port "$R_PORT" "$RESOLVER_PID" "the resolver"
RESOLVER="http://127.0.0.1:$R_PORT"

log "registering and including $ARCHIVES Archives"
while read -r service address role; do
    echo "$KEY" | "$RESOLVER_BIN" register "$service" --email bench@example.org \
        --config "$WORK/resolver/resolver.toml" >/dev/null
    out="$(curl -s "$RESOLVER/$RESOLVER_IBI?servicesubject=inclusionRequest&archiveaddress=$address&archiveserviceibi=$service&archiveip=127.0.0.1&archiveprotocol=HTTP&archiveplatformversion=1&archiveadmemailaddress=bench@example.org&registrationkey=$KEY" | tr -d '\r' | tr '\n' ' ' || true)"
    case "$out" in
        *"status.archive included"*"status.confirmation successful"*) ;;
        *) die "the $role Archive $service ($address) was not included: $out" ;;
    esac
done <"$WORK/archives.txt"
included="$("$RESOLVER_BIN" archives --csv --config "$WORK/resolver/resolver.toml" | awk -F, 'NR > 1 && $3 == "yes"' | wc -l)"
[ "$included" = "$ARCHIVES" ] || {
    "$RESOLVER_BIN" archives --config "$WORK/resolver/resolver.toml" >&2
    die "$included Archives included, not $ARCHIVES"
}
sleep 2.5 # the server reads the included Archives again every 2 s

# --- the readers -----------------------------------------------------------------------
log "readers: $CONNS connections for ${DURATION} s$([ "$REQUESTS" -gt 0 ] && echo " (at most $REQUESTS requests)")"
# The resolver's CPU time over the run, beside the one netsim reports of itself: the fakes
# and readers are to leave the CPUs to what they measure.
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
RESOLVER_TICKS="$(cpu_ticks "$RESOLVER_PID")"
RUN_START="$(date +%s.%N)"
touch "$WORK/go"
if ! wait "$NETSIM_PID"; then
    cat "$WORK/netsim.log" >&2
    die "netsim failed"
fi
forget_pid "$NETSIM_PID"
RESOLVER_CPU="$(python3 -c 'import sys; t = (int(sys.argv[1]) - int(sys.argv[2])) / int(sys.argv[3]); s = float(sys.argv[5]) - float(sys.argv[4]); print(f"{t:.1f} s over {s:.1f} s, {t * 100 / s:.0f} % of one CPU")' \
    "$(cpu_ticks "$RESOLVER_PID")" "$RESOLVER_TICKS" "$(getconf CLK_TCK)" "$RUN_START" "$(date +%s.%N)")"
[ -s "$WORK/netsim.log" ] && { log "netsim said:"; cat "$WORK/netsim.log" >&2; }

# What the resolver counted itself, beside what the readers and the Archives saw.
METRICS_PY='
import re, sys
sums = {}
for line in sys.stdin:
    if line.startswith("#"):
        continue
    m = re.match(r"ibi_resolver_(resolutions|location_memory|acknowledgments|archive_requests|throttled)_total\{([^}]*)\} ([0-9.e+]+)", line)
    if m:
        label = dict(re.findall(r"(\w+)=\"([^\"]*)\"", m.group(2)))
        key = label.get("outcome") or label.get("result") or label.get("limit") or "?"
        sums.setdefault(m.group(1), {}).setdefault(key, 0)
        sums[m.group(1)][key] += float(m.group(3))
        continue
    m = re.match(r"ibi_resolver_(overloaded|abandoned)_total ([0-9.e+]+)", line)
    if m:
        sums.setdefault(m.group(1), {})["all"] = float(m.group(2))
names = {"resolutions": "resolutions by outcome", "location_memory": "location memory",
         "archive_requests": "Archive requests by result (all Archives)",
         "acknowledgments": "acknowledgments", "throttled": "429 by bound",
         "overloaded": "503 overloaded", "abandoned": "abandoned by the client"}
for k in ["resolutions", "location_memory", "archive_requests", "acknowledgments", "throttled", "overloaded", "abandoned"]:
    if k in sums:
        print(f"- {names[k]}: " + ", ".join(f"{n} {int(v)}" for n, v in sorted(sums[k].items())))
'

# --- the report ------------------------------------------------------------------------
{
    echo "# The IBI network simulated"
    echo
    echo "\`bench/network.sh${ARGS_GIVEN:+ $ARGS_GIVEN}\`, $STARTED."
    echo
    echo "- machine: $(nproc) CPUs, $(uname -r), $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo); load average at start $LOAD_START, at the end $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- source: commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO" diff --quiet HEAD -- resolver bench/netsim.rs 2>/dev/null || echo ' (with local changes)')$([ "$BUILD" = 0 ] && echo "; --no-build: the executables found in $BIN_DIR"); $(rustc -V)"
    echo "- resolver: [archives] timeout = \"${TIMEOUT_S}s\", dormant_after = $DORMANT_AFTER, probe and connections their defaults; location memory its default; [limits] per client raised; trustedproxies 127.0.0.1"
    echo
    cat "$WORK/body.md"
    echo
    echo "## What the resolver counted (/metrics, setup included)"
    echo
    curl -s "$RESOLVER/metrics" | python3 -c "$METRICS_PY"
    echo "- CPU time of the resolver from the readers' start to the report (the last requests' wait included): $RESOLVER_CPU"
} >"$OUT"
log "report: $OUT"
cat "$OUT"
