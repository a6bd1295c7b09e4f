# shellcheck shell=bash
# What the benchmarks of the resolver share, sourced by bench/resolver.sh and
# bench/resolver-scale.sh:
#
#   . bench/lib/resolver.sh
#   find_executables REPO BUILD [DIR]   # sets ARCHIVE_BIN and RESOLVER_BIN
#   free_port                           # a free TCP port on 127.0.0.1
#   wait_port PORT PID WHAT             # until PORT listens; dies if PID ends first
#   service_ibi I                       # the service IBI of Archive I
#   archive_root ROOT I PORT            # ROOT made Archive I's, to serve on 127.0.0.1:PORT
#   register_and_include TOML URL ROOT SERVICE   # Archive ROOT in the resolver of TOML
#   floor_path LOG IBI                  # the urlRequest for IBI an Archive logged
#   status_of URL                       # the HTTP status of a GET
#   to_us LATENCY                       # wrk's "1.20ms" -> 1200 (µs)
#   wrk_run URL CONNECTIONS             # wrk for DURATION s -> W_RPS W_P50 W_P99 ...
#   resolver_toml PORT PUBLICURL DATABASE TOP MORE   # a resolver.toml for the benchmarks
#   stop_pid PID; stop_all; forget_pid PID   # the processes of PIDS (and groups of PGIDS)
#
# find_executables: DIR, when given, holds both (nothing is built); else they are those
# of ${CARGO_TARGET_DIR:-REPO/target}/<host triple>/release, built first when BUILD is 1.
# The sourcing script defines log MESSAGE and die MESSAGE (which exits), SAMPLE_SERVICE
# (the service IBI of sample-archive/, Archive 0's), and for register_and_include KEY
# (the registration key) and RESOLVER_IBI, for wrk_run DURATION (seconds), for
# resolver_toml RESOLVER_IBI, TIMEOUT_S and DORMANT_AFTER; and the arrays PIDS (every
# process it started, stopped by stop_all) and PGIDS (those started by setsid, whose process
# group is killed too).

RESOLVER_LIB_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

find_executables() { # repo build [dir]
    local dir="${3:-}" target exe
    if [ -z "$dir" ]; then
        command -v rustc >/dev/null || die "rustc is needed to find the executables"
        target="${CARGO_TARGET_DIR:-$1/target}"
        case "$target" in /*) ;; *) target="$1/$target" ;; esac
        dir="$target/$(rustc -vV | sed -n 's/^host: //p')/release"
        if [ "$2" = 1 ]; then
            log "building (release)"
            cargo build --release --bins -p ibi-archive -p ibi-resolver >&2
        fi
    fi
    ARCHIVE_BIN="$dir/ibi-archive"
    RESOLVER_BIN="$dir/ibi-resolver"
    for exe in "$ARCHIVE_BIN" "$RESOLVER_BIN"; do
        [ -x "$exe" ] || die "$exe is missing (cargo build --release)"
    done
}

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
    die "$3 does not listen on port $1"
}

service_ibi() { # i -> the service IBI of Archive i (Archive 0 keeps the sample's)
    if [ "$1" = 0 ]; then
        echo "$SAMPLE_SERVICE"
    else
        printf 'urlib.net/www/2020/01.%02d.%02d.%02d\n' $((1 + $1 / 1440)) $(($1 / 60 % 24)) $(($1 % 60))
    fi
}

# Archive i's root at ROOT (made): col/ a copy of sample-archive/'s for Archive 0 (it holds
# 8JMKD3MGP8W/35MME4E), empty for the others; var/; archive.toml the sample's with
# Archive i's own archiveserviceibi and archiveaddress 127.0.0.1:PORT.
archive_root() { # root i port
    mkdir -p "$1/col" "$1/var"
    if [ "$2" = 0 ]; then
        cp -r "$RESOLVER_LIB_REPO/sample-archive/col/." "$1/col/"
    fi
    sed -e "s|^archiveserviceibi *=.*|archiveserviceibi = \"$(service_ibi "$2")\"|" \
        -e "s|^archiveaddress *=.*|archiveaddress    = \"127.0.0.1:$3\"|" \
        "$RESOLVER_LIB_REPO/sample-archive/archive.toml" >"$1/archive.toml"
}

# The Archive at ROOT (service SERVICE) registered in the registry of the resolver whose
# configuration is TOML (`ibi-resolver register`, KEY on stdin), then included by the
# resolver at URL (`ibi-archive include --resolver URL/RESOLVER_IBI`). Fails (status 1)
# when the inclusion did not succeed, what the Archive said in INCLUDE_OUT.
register_and_include() { # toml url root service
    echo "$KEY" | "$RESOLVER_BIN" register "$4" --email bench@example.org \
        --config "$1" >/dev/null
    INCLUDE_OUT="$("$ARCHIVE_BIN" include --root "$3" --resolver "$2/$RESOLVER_IBI")"
    case "$INCLUDE_OUT" in
        *"confirmation successful"*) return 0 ;;
        *) return 1 ;;
    esac
}

# The path and query of the first urlRequest for IBI in the request log LOG of an
# Archive (`"GET /...servicesubject=urlRequest...parsedibiurl.ibi=IBI..."`): what a
# resolver sends, asked directly for the floor. Waits up to 5 s for the log to show it;
# prints nothing when it does not.
floor_path() { # log ibi
    local path=""
    for _ in $(seq 1 50); do
        path="$(sed -n 's/^[^"]*"GET \([^" ]*servicesubject=urlRequest[^" ]*\)[" ].*/\1/p' "$1" \
            | grep -F "parsedibiurl.ibi=$2" | head -1 || true)"
        [ -n "$path" ] && break
        sleep 0.1
    done
    echo "$path"
}

status_of() { curl -s -o /dev/null -w '%{http_code}' "$1"; }

to_us() { # wrk latency ("812.00us", "1.20ms", "2.01s", "1.00m") -> µs
    python3 -c '
import re,sys
m=re.match(r"([0-9.]+)(us|ms|s|m)$", sys.argv[1]); v=float(m.group(1))
print(round(v*{"us":1,"ms":1e3,"s":1e6,"m":6e7}[m.group(2)]))' "$1"
}

# wrk at url with c connections for DURATION s (`-t2`, `-t1` for one connection;
# --latency; wrk follows no redirect: each request is one resolution)
# -> sets W_RPS W_P50 W_P99 (µs) W_N (requests) W_NON3XX W_ERR W_LOAD (load average before)
wrk_run() { # url conns
    local threads=2 outp
    [ "$2" -lt 2 ] && threads=1
    W_LOAD="$(cut -d' ' -f1 /proc/loadavg)"
    outp="$(wrk -t"$threads" -c"$2" -d"${DURATION}s" --timeout 10s --latency "$1")"
    W_RPS="$(echo "$outp" | awk '/Requests\/sec/{print $2}')"
    W_N="$(echo "$outp" | awk '/requests in/{print $1}')"
    local p50 p99
    p50="$(echo "$outp" | awk '$1=="50%"{print $2}')"
    p99="$(echo "$outp" | awk '$1=="99%"{print $2}')"
    if [ -z "$W_RPS" ] || [ -z "$W_N" ] || [ -z "$p50" ] || [ -z "$p99" ]; then
        log "wrk gave no figures for $1:"; echo "$outp" >&2; exit 1
    fi
    W_P50="$(to_us "$p50")"
    W_P99="$(to_us "$p99")"
    W_NON3XX="$(echo "$outp" | awk '/Non-2xx or 3xx/{print $NF}')"
    W_NON3XX="${W_NON3XX:-0}"
    W_ERR="$(echo "$outp" | awk '/Socket errors/{print $3+$5+$7+$9}' | tr -d ',')"
    W_ERR="${W_ERR:-0}"
}

# A resolver.toml (on stdout) listening on 127.0.0.1:PORT, reached at PUBLICURL, its
# registry DATABASE (a path relative to the file, or a postgresql:// URI); TOP: more
# top-level lines (trustedproxies...), MORE: more tables ([memory]...).
resolver_toml() { # port publicurl database top more
    cat <<EOF
serviceibi = "$RESOLVER_IBI"
publicurl = "$2"
listen = "127.0.0.1:$1"
database = "$3"
$4
# wrk is one client network standing for many readers: the bounds per client out of its way.
[limits]
per_client_resolutions = 100000
per_client_misses = 1000000
per_client_connections = 1000000
[archives]
timeout = "${TIMEOUT_S}s"
networks = ["127.0.0.0/8"]
dormant_after = $DORMANT_AFTER
$5
EOF
}

stop_pid() { # pid: TERM, up to 5 s, then KILL (and its group if it leads one)
    local pid="$1" g
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
    for g in "${PGIDS[@]+"${PGIDS[@]}"}"; do
        if [ "$g" = "$pid" ]; then kill -KILL -- "-$pid" 2>/dev/null || true; fi
    done
    wait "$pid" 2>/dev/null || true
}
stop_all() {
    local pid
    for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
        stop_pid "$pid"
    done
    PIDS=()
    PGIDS=()
}
forget_pid() { # pid: stopped already; no longer in PIDS
    local keep=() p
    for p in "${PIDS[@]+"${PIDS[@]}"}"; do [ "$p" = "$1" ] || keep+=("$p"); done
    PIDS=("${keep[@]+"${keep[@]}"}")
}
