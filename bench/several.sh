#!/usr/bin/env bash
# The resolver in three deployments, measured in one run on loopback against the same
# Archives: the cost of the registry on PostgreSQL, and of two instances behind a balancer.
# Writes a markdown report (default bench/several-results.md).
#
#   bench/several.sh [--archives 10] [--runs 3] [--duration 5] [--connections 16]
#                    [--out FILE] [--no-haproxy] [--strict] [--no-build] [--keep]
#
# The deployments, every resolver over the same K Archives (--archives):
#   sqlite   one `ibi-resolver serve`, its registry in SQLite (the default);
#   pg       one `ibi-resolver serve`, its registry in PostgreSQL;
#   apache   two `ibi-resolver serve` on one PostgreSQL database behind Apache's
#            mod_proxy_balancer (resolver/deploy/apache2-ibi-resolver-balancer.conf);
#   haproxy  the same two behind HAProxy (resolver/deploy/haproxy-ibi-resolver.cfg), when
#            /usr/sbin/haproxy is installed and --no-haproxy is not given.
# Each deployment twice: with the location memory (the default) and with
# `[memory] entries = 0`. The balancers' configurations are those of the repository,
# with only what resolver/tests/resolver_balancer.rs changes in its copies: the
# instances' addresses 127.0.0.1:8090 and :8091 made free ports of 127.0.0.1 (and
# HAProxy's `bind :80` a free port of 127.0.0.1, after a global section that logs to its
# stderr, a file here); Apache's inside the <VirtualHost> bench/lib/httpd.sh generates.
#
#  1. PostgreSQL: a throwaway cluster (initdb, pg_ctl of the newest
#     /usr/lib/postgresql/<version>/bin), as `nobody` when run as root, in a temporary
#     directory (its unix socket there too), on a free port of 127.0.0.1, trust on
#     loopback only; with durable settings (fsync = on, synchronous_commit = on: a
#     registry as it would be run, not the tests' fsync = off). Stopped and deleted on
#     exit, failure included. One database per resolver configuration;
#  2. K Archives (`ibi-archive serve`, each over its own copy of sample-archive/, only the
#     first holding 8JMKD3MGP8W/35MME4E), as bench/resolver.sh makes them;
#  3. every Archive registered (`ibi-resolver register`, the key on stdin) and included
#     (`ibi-archive include --resolver URL`) in every resolver; of two instances on one
#     database, through instance 1 only: the script then waits until instance 2 has every
#     Archive (it learns of them through PostgreSQL's notifications). Checked: each
#     resolver and balancer answers 302 to the holding Archive for the held item;
#  4. a warm-up (1 s of wrk at each URL below, not recorded), then --runs times (ratios
#     are taken within a run; the tables give the median over runs):
#     `wrk -t2 -cC -dD --latency` (wrk follows no redirect: each request is one
#     resolution) at
#       floor       the holding Archive asked directly with the urlRequest a resolver
#                   sends (read from its request log), as bench/resolver.sh measures it;
#       remembered  per deployment, the memory-on resolver, the held item (resolved
#                   before, so the memory answers);
#       fan-out     per deployment, the memory-off resolver, the held item (each
#                   resolution asks every Archive);
#     the deployments in a different order each run (rotated), so that a drift of the
#     machine's load does not fall on one of them only.
# Then the report (--out): per deployment its medians beside the floor's, the ratios to
# SQLite, every run's figures, and the acceptance rule "PostgreSQL must not cost the
# remembered path more than 10 %": the median over runs of remembered(pg) ÷
# remembered(sqlite), req/s at least 0.90 and p99 at most 1.10: PASS or FAIL, printed
# last. The figures are noisy on a small machine shared with other work: a FAIL exits
# non-zero only with --strict.
#
# Needs wrk, curl, python3, PostgreSQL (Debian's postgresql), apache2 with mod_proxy,
# mod_proxy_http, mod_proxy_balancer, mod_lbmethod_byrequests, mod_slotmem_shm and
# mod_proxy_hcheck (haproxy optional); cargo for the build (--no-build: the release
# executables already there). Every process started is stopped by its PID (Apache by its
# process group) on exit. --keep leaves the logs in the temporary directory it names.
set -euo pipefail

ARCHIVES=10
RUNS=3
DURATION=5
CONNS=16
OUT=""
HAPROXY=1
STRICT=0
BUILD=1
KEEP=0
ARGS_GIVEN="$*"
while [ $# -gt 0 ]; do
    case "$1" in
        --archives) ARCHIVES="$2"; shift 2 ;;
        --runs) RUNS="$2"; shift 2 ;;
        --duration) DURATION="$2"; shift 2 ;;
        --connections) CONNS="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --no-haproxy) HAPROXY=0; shift ;;
        --strict) STRICT=1; shift ;;
        --no-build) BUILD=0; shift ;;
        --keep) KEEP=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "several.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

log() { echo "several.sh: $*" >&2; }
die() { log "$*"; exit 1; }
usage_error() { echo "several.sh: $*" >&2; exit 2; }

is_count() { case "$1" in '' | *[!0-9]*) return 1 ;; *) [ "$1" -ge "$2" ] ;; esac; }
if ! is_count "$RUNS" 1 || [ "$RUNS" -gt 59 ]; then usage_error "--runs takes 1 to 59"; fi
is_count "$DURATION" 1 || usage_error "--duration takes whole seconds (>= 1)"
is_count "$CONNS" 2 || usage_error "--connections takes a number >= 2"
if ! is_count "$ARCHIVES" 1 || [ "$ARCHIVES" -gt 1000 ]; then usage_error "--archives takes 1 to 1000"; fi

CALLER_DIR="$PWD" # --out is relative to it
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
umask 022
OUT="${OUT:-$REPO/bench/several-results.md}"
case "$OUT" in /*) ;; *) OUT="$CALLER_DIR/$OUT" ;; esac
APACHE_CONF="$REPO/resolver/deploy/apache2-ibi-resolver-balancer.conf"
HAPROXY_CONF="$REPO/resolver/deploy/haproxy-ibi-resolver.cfg"
HAPROXY_BIN=/usr/sbin/haproxy
CONF_BACKENDS=(127.0.0.1:8090 127.0.0.1:8091) # the instances the configurations name
BALANCER_MODULES=(mod_proxy.so mod_proxy_http.so mod_slotmem_shm.so mod_proxy_balancer.so
    mod_lbmethod_byrequests.so mod_proxy_hcheck.so)

needed=(rustc wrk curl python3)
[ "$BUILD" = 1 ] && needed+=(cargo)
for tool in "${needed[@]}"; do
    command -v "$tool" >/dev/null || die "$tool is needed"
done
if [ "$HAPROXY" = 1 ] && [ ! -x "$HAPROXY_BIN" ]; then
    log "$HAPROXY_BIN is not installed: HAProxy left out"
    HAPROXY=0
fi
PG_BIN=""
for v in $(ls /usr/lib/postgresql 2>/dev/null | grep -E '^[0-9]+$' | sort -n); do
    [ -x "/usr/lib/postgresql/$v/bin/initdb" ] && PG_BIN="/usr/lib/postgresql/$v/bin"
done
[ -n "$PG_BIN" ] || die "PostgreSQL is needed (initdb in /usr/lib/postgresql/<version>/bin: package postgresql)"

# K resolutions at once fan out to K Archives each: many sockets.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# lighttpd_config, apache2_config, httpd_modules, APACHE2_BIN: the generated server
# configurations (shared with the tests and the other benchmarks).
# shellcheck source=lib/httpd.sh source-path=SCRIPTDIR disable=SC1091
. "$REPO/bench/lib/httpd.sh"
# shellcheck source=bench/lib/resolver.sh
. "$REPO/bench/lib/resolver.sh"
find_executables "$REPO" "$BUILD"
[ -x "$APACHE2_BIN" ] || die "$APACHE2_BIN is needed"
while read -r _ so; do
    [ -f "$so" ] || die "$so is needed (apache2 with mod_proxy_balancer and mod_proxy_hcheck)"
done < <(httpd_modules apache2 --vhost "${BALANCER_MODULES[@]}")

RESOLVER_IBI="J8LNKB5R7W/3FUQHC5"
SAMPLE_SERVICE="sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
KEY="1234567890"
HIT="8JMKD3MGP8W/35MME4E" # sid.inpe.br/mtc-m18@80/2009/07.21.13.23, in sample-archive/
TIMEOUT_S=2
DORMANT_AFTER=5
SETTLE_S=20 # how long an instance may take to learn of what the other wrote, a balancer
            # to find its instances ready

WORK="$(mktemp -d -t ibi-several-bench.XXXXXX)"
WORK="$(cd "$WORK" && pwd -P)"
chmod 755 "$WORK" # Apache's children (www-data) reach their run-time files in here
PIDS=()
PGIDS=()
PG_DIR=""
PG_USER_ARGS=() # as root: setpriv to nobody (initdb refuses root)
if [ "$(id -u)" = 0 ]; then
    id nobody >/dev/null 2>&1 || die "the user nobody is needed to run PostgreSQL as root"
    PG_USER_ARGS=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
fi
WWW_USER=""
if [ "$(id -u)" = 0 ] && id www-data >/dev/null 2>&1; then WWW_USER=www-data; fi

pg() { # a PostgreSQL program, as the cluster's user, in its directory, a clean environment
    (cd "$PG_DIR" && env -i PATH="$PG_BIN:/usr/bin:/bin" HOME="$PG_DIR" LC_ALL=C \
        "${PG_USER_ARGS[@]+"${PG_USER_ARGS[@]}"}" "$@")
}
pg_stop() {
    if [ -n "$PG_DIR" ] && [ -f "$PG_DIR/data/postmaster.pid" ]; then
        pg pg_ctl -D "$PG_DIR/data" -m fast -w -t 60 stop >/dev/null 2>&1 \
            || pg pg_ctl -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
}
cleanup() {
    stop_all
    pg_stop
    if [ "$KEEP" = 1 ]; then
        log "logs kept in $WORK${PG_DIR:+ and $PG_DIR}"
    else
        rm -rf "$WORK"
        [ -z "$PG_DIR" ] || rm -rf "$PG_DIR"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- PostgreSQL -----------------------------------------------------------------------
PG_DIR="$(mktemp -d -t ibi-several-pg.XXXXXX)"
PG_DIR="$(cd "$PG_DIR" && pwd -P)"
[ "$(id -u)" = 0 ] && chown nobody: "$PG_DIR"
log "PostgreSQL: initdb in $PG_DIR ($PG_BIN)"
pg initdb -D "$PG_DIR/data" -U postgres -A trust -E UTF8 --locale=C >"$WORK/initdb.log" 2>&1 \
    || { cat "$WORK/initdb.log" >&2; die "initdb failed"; }
pg sh -c 'cat >>"$1"' sh "$PG_DIR/data/postgresql.conf" <<EOF

# A throwaway cluster of bench/several.sh: durable, as a registry is run.
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PG_DIR'
max_connections = 100
fsync = on
synchronous_commit = on
full_page_writes = on
timezone = 'UTC'
log_timezone = 'UTC'
lc_messages = 'C'
include 'port.conf'
EOF
pg sh -c 'cat >"$1"' sh "$PG_DIR/data/pg_hba.conf" <<'EOF'
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 trust
host    all       all   127.0.0.1/32  trust
EOF
PG_PORT=""
for attempt in 1 2 3 4 5; do
    port="$(free_port)"
    echo "port = $port" | pg sh -c 'cat >"$1"' sh "$PG_DIR/data/port.conf"
    if pg pg_ctl -D "$PG_DIR/data" -l "$PG_DIR/postgresql.log" -w -t 60 start >/dev/null 2>&1; then
        PG_PORT="$port"
        break
    fi
    grep -q "could not bind" "$PG_DIR/postgresql.log" 2>/dev/null && [ "$attempt" -lt 5 ] \
        || { cat "$PG_DIR/postgresql.log" >&2; die "PostgreSQL did not start"; }
done
PG_VERSION="$("$PG_BIN/postgres" -V)"
psql_do() { # database sql
    psql -XAtq -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$1" -c "$2"
}
pg_uri() { echo "postgresql://postgres@127.0.0.1:$PG_PORT/$1"; }
log "PostgreSQL on 127.0.0.1:$PG_PORT: fsync $(psql_do postgres 'SHOW fsync'), synchronous_commit $(psql_do postgres 'SHOW synchronous_commit')"

# --- the Archives ---------------------------------------------------------------------
K="$ARCHIVES"
A="$WORK/archives"
mkdir -p "$A/logs"
log "$K Archives"
APORTS=()
apids=()
for i in $(seq 0 $((K - 1))); do
    port="$(free_port)"
    APORTS+=("$port")
    archive_root "$A/a$i" "$i" "$port"
    "$ARCHIVE_BIN" serve --root "$A/a$i" --listen "127.0.0.1:$port" --no-inclusion \
        --max-connections 4096 --max-per-client 4096 2>"$A/logs/a$i.log" >/dev/null &
    PIDS+=("$!")
    apids+=("$!")
done
for i in $(seq 0 $((K - 1))); do
    wait_port "${APORTS[$i]}" "${apids[$i]}" "Archive $i"
done

# --- the resolvers --------------------------------------------------------------------
# One resolver: its name (a directory of WORK), its port, its URL, its log.
declare -A R_PORT_OF R_PUBLIC_OF
start_resolver() { # name port publicurl database top more
    local dir="$WORK/$1" pid
    mkdir -p "$dir"
    resolver_toml "$2" "$3" "$4" "$5" "$6" >"$dir/resolver.toml"
    "$RESOLVER_BIN" serve --config "$dir/resolver.toml" 2>"$dir/resolver.log" &
    pid=$!
    PIDS+=("$pid")
    R_PORT_OF[$1]="$2"
    wait_port "$2" "$pid" "resolver $1"
}
include_all() { # name: every Archive registered and included through resolver name
    local i
    for i in $(seq 0 $((K - 1))); do
        register_and_include "$WORK/$1/resolver.toml" "http://127.0.0.1:${R_PORT_OF[$1]}" \
            "$A/a$i" "$(service_ibi "$i")" \
            || die "Archive $i not included through $1: $INCLUDE_OUT"
    done
}
archives_known() { # name -> how many Archives the resolver holds (its home page says)
    curl -s -H 'Accept-Language: en' "http://127.0.0.1:${R_PORT_OF[$1]}/" \
        | grep -oE '[0-9]+ Archives? included' | head -1 | cut -d' ' -f1 || true
}
wait_until() { # what command...: until the command succeeds, at most SETTLE_S
    local what="$1" t0
    shift
    t0="$(date +%s%N)"
    until "$@"; do
        [ $(( ($(date +%s%N) - t0) / 1000000000 )) -lt "$SETTLE_S" ] || die "$what: not within ${SETTLE_S}s"
        sleep 0.05
    done
    WAITED_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
}
knows_all() { [ "$(archives_known "$1")" = "$K" ]; }
redirects_to_holder() { # url: 302 to Archive 0 (the holding one)
    local loc
    loc="$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$1")"
    case "$loc" in "302 http://127.0.0.1:${APORTS[0]}/"*) return 0 ;; *) return 1 ;; esac
}

MEMORY_OFF=$'[memory]\nentries = 0'
TRUSTED='trustedproxies = ["127.0.0.1/32"]'
declare -A MEM_URL OFF_URL LEARNED_MS # deployment -> the URL readers ask; memory -> ms
DEPLOYMENTS=(sqlite pg apache)
[ "$HAPROXY" = 1 ] && DEPLOYMENTS+=(haproxy)

log "resolvers: SQLite"
for m in mem off; do
    more=""; [ "$m" = off ] && more="$MEMORY_OFF"
    port="$(free_port)"
    start_resolver "sqlite-$m" "$port" "http://127.0.0.1:$port" registry.sqlite "" "$more"
    include_all "sqlite-$m"
done
log "resolvers: PostgreSQL"
for m in mem off; do
    more=""; [ "$m" = off ] && more="$MEMORY_OFF"
    psql_do postgres "CREATE DATABASE single_$m"
    port="$(free_port)"
    start_resolver "pg-$m" "$port" "http://127.0.0.1:$port" "$(pg_uri "single_$m")" "" "$more"
    include_all "pg-$m"
done
MEM_URL[sqlite]="http://127.0.0.1:${R_PORT_OF[sqlite-mem]}"
OFF_URL[sqlite]="http://127.0.0.1:${R_PORT_OF[sqlite-off]}"
MEM_URL[pg]="http://127.0.0.1:${R_PORT_OF[pg-mem]}"
OFF_URL[pg]="http://127.0.0.1:${R_PORT_OF[pg-off]}"

# Two instances on one database per memory setting; the balancers in front of them.
declare -A BAL_PORT # apache-mem ... -> its port
for b in apache haproxy; do
    [ "$b" = haproxy ] && [ "$HAPROXY" = 0 ] && continue
    for m in mem off; do BAL_PORT[$b-$m]="$(free_port)"; done
done
log "resolvers: two instances on one PostgreSQL database, twice"
for m in mem off; do
    more=""; [ "$m" = off ] && more="$MEMORY_OFF"
    psql_do postgres "CREATE DATABASE pair_$m"
    for n in 1 2; do
        port="$(free_port)"
        # publicurl: the address readers use, Apache's (HAProxy is a second door).
        start_resolver "pair-$m-$n" "$port" "http://127.0.0.1:${BAL_PORT[apache-$m]}" \
            "$(pg_uri "pair_$m")" "$TRUSTED" "$more"
    done
    include_all "pair-$m-1"
    wait_until "instance 2 ($m) learning of the $K Archives included through instance 1" knows_all "pair-$m-2"
    log "pair-$m-2 held the $K Archives included through pair-$m-1 ${WAITED_MS} ms after the last inclusion"
    LEARNED_MS[$m]="$WAITED_MS"
done

with_ports() { # file port1 port2 -> the file, the instances' addresses replaced
    local text="$1" i b
    for b in "${CONF_BACKENDS[@]}"; do
        grep -qF "$b" "$text" || die "$text does not name $b"
    done
    sed -e "s|127\\.0\\.0\\.1:8090|127.0.0.1:$2|g" -e "s|127\\.0\\.0\\.1:8091|127.0.0.1:$3|g" "$text"
}
start_apache() { # name port backend-port1 backend-port2
    local d="$WORK/$1" mods=() so
    mkdir -p "$d/htdocs"
    chmod 755 "$d" "$d/htdocs"
    echo "bench server" >"$d/htdocs/index.html"
    : >"$d/error.log"
    with_ports "$APACHE_CONF" "$3" "$4" >"$d/apache2-ibi-resolver-balancer.conf"
    for so in "${BALANCER_MODULES[@]}"; do mods+=(--module "$so"); done
    apache2_config --dir "$d" --port "$2" --vhost "$d/apache2-ibi-resolver-balancer.conf" \
        "${mods[@]}" ${WWW_USER:+--user "$WWW_USER"} --threads 16 --start-servers 2 \
        >"$d/apache2.conf"
    (cd "$d" && env -i APACHE_LOG_DIR="$d" PATH=/usr/sbin:/usr/bin:/bin LANG=C \
        setsid "$APACHE2_BIN" -f "$d/apache2.conf" -DFOREGROUND) </dev/null >>"$d/stdio.log" 2>&1 &
    PIDS+=("$!")
    PGIDS+=("$!")
    wait_port "$2" "$!" "apache2 $1 (see $d/error.log)"
}
start_haproxy() { # name port backend-port1 backend-port2
    local d="$WORK/$1"
    mkdir -p "$d"
    printf 'global\n    log stderr format raw local0\n' >"$d/haproxy-global.cfg"
    grep -q '^    bind :80$' "$HAPROXY_CONF" || die "$HAPROXY_CONF has no 'bind :80' line"
    with_ports "$HAPROXY_CONF" "$3" "$4" | sed "s|^    bind :80\$|    bind 127.0.0.1:$2|" \
        >"$d/haproxy-ibi-resolver.cfg"
    "$HAPROXY_BIN" -db -f "$d/haproxy-global.cfg" -f "$d/haproxy-ibi-resolver.cfg" \
        </dev/null >"$d/haproxy.log" 2>&1 &
    PIDS+=("$!")
    wait_port "$2" "$!" "haproxy $1 (see $d/haproxy.log)"
}
for m in mem off; do
    p1="${R_PORT_OF[pair-$m-1]}"
    p2="${R_PORT_OF[pair-$m-2]}"
    start_apache "apache-$m" "${BAL_PORT[apache-$m]}" "$p1" "$p2"
    [ "$HAPROXY" = 1 ] && start_haproxy "haproxy-$m" "${BAL_PORT[haproxy-$m]}" "$p1" "$p2"
done
for b in apache haproxy; do
    [ "$b" = haproxy ] && [ "$HAPROXY" = 0 ] && continue
    MEM_URL[$b]="http://127.0.0.1:${BAL_PORT[$b-mem]}"
    OFF_URL[$b]="http://127.0.0.1:${BAL_PORT[$b-off]}"
done

# --- checks ---------------------------------------------------------------------------
for r in "${!R_PORT_OF[@]}"; do
    wait_until "resolver $r holding the $K Archives" knows_all "$r"
    wait_until "resolver $r resolving $HIT" redirects_to_holder "http://127.0.0.1:${R_PORT_OF[$r]}/$HIT"
done
both_ready() { # url: 20 answers in a row 302 to the holder (both instances in turn)
    local _
    for _ in $(seq 1 20); do redirects_to_holder "$1" || return 1; done
}
for d in "${DEPLOYMENTS[@]}"; do
    wait_until "$d resolving $HIT (remembered)" both_ready "${MEM_URL[$d]}/$HIT"
    wait_until "$d resolving $HIT (fan-out)" both_ready "${OFF_URL[$d]}/$HIT"
done
FLOOR_PATH="$(floor_path "$A/logs/a0.log" "$HIT")"
[ -n "$FLOOR_PATH" ] || die "no urlRequest for $HIT in the holding Archive's log"
FLOOR="http://127.0.0.1:${APORTS[0]}$FLOOR_PATH"
case "$(curl -s "$FLOOR")" in *url*) ;; *) die "the floor request is not a hit: $FLOOR" ;; esac
log "floor: $FLOOR"

# --- the runs -------------------------------------------------------------------------
RESULTS="$WORK/results.tsv" # run deployment case rps p50 p99 n non3xx err load share
: >"$RESULTS"
served() { # name: the resolutions of HIT resolver name answered so far (its log)
    grep -cF "\"GET /$HIT\" 302 " "$WORK/$1/resolver.log" || true
}
measure() { # run deployment case url [pair-name]
    local before1=0 before2=0 share="-" a b
    if [ -n "${5:-}" ]; then before1="$(served "$5-1")"; before2="$(served "$5-2")"; fi
    wrk_run "$4" "$CONNS"
    if [ -n "${5:-}" ]; then
        a=$(( $(served "$5-1") - before1 ))
        b=$(( $(served "$5-2") - before2 ))
        share="$a/$b"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$W_RPS" "$W_P50" \
        "$W_P99" "$W_N" "$W_NON3XX" "$W_ERR" "$W_LOAD" "$share" >>"$RESULTS"
    log "run $1 $2 $3: $W_RPS req/s p50 $W_P50 µs p99 $W_P99 µs ($W_N requests, $W_NON3XX not 2xx/3xx, $W_ERR socket errors; by instance $share; load $W_LOAD)"
}
# A warm-up, not recorded: 1 s of wrk at each URL, so that no deployment's first
# measurement pays for what the first requests of a process do once.
log "warm-up"
SAVED_DURATION="$DURATION"
DURATION=1
wrk_run "$FLOOR" "$CONNS"
for d in "${DEPLOYMENTS[@]}"; do
    wrk_run "${MEM_URL[$d]}/$HIT" "$CONNS"
    wrk_run "${OFF_URL[$d]}/$HIT" "$CONNS"
done
DURATION="$SAVED_DURATION"
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"
n=${#DEPLOYMENTS[@]}
for RUN in $(seq 1 "$RUNS"); do
    log "run $RUN of $RUNS"
    measure "$RUN" floor floor "$FLOOR"
    for j in $(seq 0 $((n - 1))); do
        d="${DEPLOYMENTS[$(((j + RUN - 1) % n))]}"
        pair=""
        case "$d" in apache|haproxy) pair=pair ;; esac
        measure "$RUN" "$d" remembered "${MEM_URL[$d]}/$HIT" "${pair:+$pair-mem}"
        measure "$RUN" "$d" fan-out "${OFF_URL[$d]}/$HIT" "${pair:+$pair-off}"
    done
done
LOAD_END="$(cut -d' ' -f1-3 /proc/loadavg)"

# --- the report -----------------------------------------------------------------------
{
    echo "- machine: $(nproc) CPUs, $(uname -r), $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo); shared with other work while it ran"
    echo "- $(rustc -V); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2); $PG_VERSION; $("$APACHE2_BIN" -v | sed -n 's/^Server version: //p')$([ "$HAPROXY" = 1 ] && echo "; $("$HAPROXY_BIN" -v | head -1 | cut -d' ' -f1-3)")"
    echo "- source: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src resolver protocol 2>/dev/null || echo ' (with local changes)'); the release executables$([ "$BUILD" = 0 ] && echo " already built (--no-build)")"
    echo "- load average at start: $LOAD_START; at the end: $LOAD_END"
    echo "- instance 2 held the $K Archives included through instance 1 (through PostgreSQL's notifications) ${LEARNED_MS[mem]} ms (memory on) and ${LEARNED_MS[off]} ms (memory off) after the last inclusion"
} >"$WORK/machine.md"
set +e
python3 - "$RESULTS" "$WORK/machine.md" "$OUT" "bench/several.sh${ARGS_GIVEN:+ $ARGS_GIVEN}" \
    "$RUNS" "$DURATION" "$CONNS" "$K" "$HAPROXY" <<'PYEOF'
import statistics, sys
results, machine, out, command, runs, duration, conns, k, haproxy = sys.argv[1:]
rows = [l.rstrip("\n").split("\t") for l in open(results) if l.strip()]
data = {}  # (run, deployment, case) -> dict
for r in rows:
    run, dep, case, rps, p50, p99, n, non3xx, err, load, share = r
    data[(int(run), dep, case)] = dict(rps=float(rps), p50=int(p50), p99=int(p99), n=int(n),
                                       non3xx=int(non3xx), err=int(err), load=load, share=share)
RUNS = sorted({k[0] for k in data})
DEPS = ["sqlite", "pg", "apache"] + (["haproxy"] if haproxy == "1" else [])
TITLE = {
    "sqlite": "one instance, its registry in SQLite (the default)",
    "pg": "one instance, its registry in PostgreSQL",
    "apache": "two instances on one PostgreSQL database behind Apache's mod_proxy_balancer",
    "haproxy": "two instances on one PostgreSQL database behind HAProxy",
}
SHORT = {"sqlite": "SQLite", "pg": "PostgreSQL", "apache": "2 × PostgreSQL, Apache",
         "haproxy": "2 × PostgreSQL, HAProxy"}
CASES = ["remembered", "fan-out"]
med = statistics.median

def fig(dep, case, key):
    return med(data[(run, dep, case)][key] for run in RUNS)

def ratio(dep, case, key, base="sqlite", base_case=None):
    vals = [data[(run, dep, case)][key] / data[(run, base, base_case or case)][key] for run in RUNS]
    return med(vals), vals

def ms(us):
    return f"{us / 1000:.2f}"

L = []
L.append("# The resolver in three deployments: SQLite, PostgreSQL, two instances behind a balancer")
L.append("")
L.append(f"Made by `{command}`: {k} Archives (`ibi-archive serve` on loopback), "
         f"`wrk -t2 -c{conns} -d{duration}s`, {len(RUNS)} run{'s' if len(RUNS) > 1 else ''}; "
         "each figure is the median over the runs, each ratio the median of the ratios taken "
         "within a run. See bench/README.md, \"Several resolvers\".")
L.append("")
L += open(machine).read().rstrip("\n").split("\n")
L.append("")
L.append("PostgreSQL is a throwaway cluster on the same machine, with durable settings "
         "(`fsync = on`, `synchronous_commit = on`): what a registry would run with. "
         "**The figures are noisy**: two CPUs shared by wrk, the resolvers, the Archives, "
         "PostgreSQL, the balancer and other work on the machine; a difference of a few "
         "per cent between two deployments is within the noise (compare the runs below).")
L.append("")

# Acceptance.
rq, rq_runs = ratio("pg", "remembered", "rps")
rp, rp_runs = ratio("pg", "remembered", "p99")
ok = rq >= 0.90 and rp <= 1.10
verdict = (f"{'PASS' if ok else 'FAIL'}: remembered, PostgreSQL ÷ SQLite: req/s {rq:.3f} "
           f"(at least 0.90), p99 {rp:.3f} (at most 1.10)")
L.append("## Acceptance: PostgreSQL must not cost the remembered path more than 10 %")
L.append("")
L.append("| remembered, PostgreSQL ÷ SQLite | median | each run |")
L.append("|---|---:|---|")
L.append(f"| req/s | {rq:.3f} | {', '.join(f'{v:.3f}' for v in rq_runs)} |")
L.append(f"| p99 | {rp:.3f} | {', '.join(f'{v:.3f}' for v in rp_runs)} |")
L.append("")
L.append(f"**{verdict}.**")
L.append("")

L.append("## Each deployment against SQLite")
L.append("")
L.append("Ratios to the SQLite instance's figure of the same case and run (req/s: higher "
         "is better; p99: lower is better).")
L.append("")
L.append("| deployment | remembered req/s | remembered p99 | fan-out req/s | fan-out p99 |")
L.append("|---|---:|---:|---:|---:|")
for dep in DEPS:
    cells = [f"{ratio(dep, c, key)[0]:.3f}" for c in CASES for key in ("rps", "p99")]
    L.append(f"| {SHORT[dep]} | " + " | ".join(cells) + " |")
L.append("")

L.append("## The deployments")
L.append("")
L.append("Two instances behind a balancer share this machine's CPUs with each other, the "
         "balancer, wrk and the Archives: what they show is the cost of the balancer's extra "
         "hop, not the capacity of two machines. *requests by instance*: the resolutions "
         "each instance logged during the measurement, per run.")
L.append("")
L.append(f"The floor: the holding Archive asked directly with the urlRequest a resolver "
         f"sends, {fig('floor', 'floor', 'rps'):.0f} req/s, p50 {ms(fig('floor', 'floor', 'p50'))} ms, "
         f"p99 {ms(fig('floor', 'floor', 'p99'))} ms. A remembered resolution asks the "
         f"remembered Archive once (then acknowledges); a fan-out asks all {k}.")
L.append("")
for i, dep in enumerate(DEPS, 1):
    L.append(f"### {i}. {TITLE[dep]}")
    L.append("")
    L.append("| case | req/s | p50 ms | p99 ms | req/s ÷ floor | p99 − floor's, ms | requests by instance (1/2) |")
    L.append("|---|---:|---:|---:|---:|---:|---|")
    for case in CASES:
        rps, p50, p99 = fig(dep, case, "rps"), fig(dep, case, "p50"), fig(dep, case, "p99")
        rf = med(data[(run, dep, case)]["rps"] / data[(run, "floor", "floor")]["rps"] for run in RUNS)
        dp = med(data[(run, dep, case)]["p99"] - data[(run, "floor", "floor")]["p99"] for run in RUNS)
        shares = ", ".join(data[(run, dep, case)]["share"] for run in RUNS)
        L.append(f"| {case} | {rps:.0f} | {ms(p50)} | {ms(p99)} | {rf:.3f} | {ms(dp)} | "
                 f"{shares if dep in ('apache', 'haproxy') else '–'} |")
    L.append("")

L.append("## Every run")
L.append("")
L.append("In the order measured; the deployments' order rotates from run to run.")
L.append("")
L.append("| run | deployment | case | req/s | p50 ms | p99 ms | requests | not 2xx/3xx | socket errors | load avg |")
L.append("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
bad = 0
for r in rows:
    d = data[(int(r[0]), r[1], r[2])]
    bad += d["non3xx"] + d["err"]
    L.append(f"| {r[0]} | {SHORT.get(r[1], r[1])} | {r[2]} | {d['rps']:.0f} | {ms(d['p50'])} | "
             f"{ms(d['p99'])} | {d['n']} | {d['non3xx']} | {d['err']} | {d['load']} |")
L.append("")
if bad:
    L.append(f"**{bad} requests did not get a 302 (or failed): see the table above.**")
    L.append("")
open(out, "w").write("\n".join(L))
print(verdict)
sys.exit(0 if ok else 3)
PYEOF
status=$?
set -e
log "report: $OUT"
if [ "$status" = 3 ]; then
    if [ "$STRICT" = 1 ]; then exit 1; fi
    log "FAIL above: the figures are noisy on a shared machine (--strict makes it an error)"
elif [ "$status" != 0 ]; then
    die "the report could not be written"
fi
