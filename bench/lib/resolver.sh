# shellcheck shell=bash
# What the benchmarks of the resolver share, sourced by bench/resolver.sh and
# bench/resolver-scale.sh:
#
#   . bench/lib/resolver.sh
#   find_executables REPO BUILD [DIR]   # sets ARCHIVE_BIN and RESOLVER_BIN
#   free_port                           # a free TCP port on 127.0.0.1
#   wait_port PORT PID WHAT             # until PORT listens; dies if PID ends first
#   service_ibi I                       # the service IBI of Archive I
#
# find_executables: DIR, when given, holds both (nothing is built); else they are those
# of ${CARGO_TARGET_DIR:-REPO/target}/<host triple>/release, built first when BUILD is 1.
# The sourcing script defines log MESSAGE and die MESSAGE (which exits), and
# SAMPLE_SERVICE (the service IBI of sample-archive/, Archive 0's).

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
