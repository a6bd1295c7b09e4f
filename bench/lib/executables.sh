# shellcheck shell=bash
# Where the benchmarks of the resolver find ibi-archive and ibi-resolver, sourced by
# bench/resolver.sh and bench/resolver-scale.sh:
#
#   . bench/lib/executables.sh
#   find_executables REPO BUILD [DIR]   # sets ARCHIVE_BIN and RESOLVER_BIN
#
# DIR, when given, holds both (nothing is built); else they are those of
# ${CARGO_TARGET_DIR:-REPO/target}/<host triple>/release, built first when BUILD is 1.
# Exits 1, saying so, when one is missing. Needs a log function (its messages).

find_executables() { # repo build [dir]
    local dir="${3:-}" target exe
    if [ -z "$dir" ]; then
        command -v rustc >/dev/null || { log "rustc is needed to find the executables"; exit 1; }
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
        [ -x "$exe" ] || { log "$exe is missing (cargo build --release)"; exit 1; }
    done
}
