#!/usr/bin/env bash
# fuzz/run.sh SECONDS [TARGET...]
#
# Builds every fuzz target (libFuzzer, AddressSanitizer) with the stable toolchain and runs
# each for SECONDS (default 30), one after another, starting from the committed seeds in
# fuzz/corpus/<target>/ (read only: new inputs go to a temporary directory). Exits non-zero
# as soon as a target finds a crash, a leak or a timeout; the input is left in
# fuzz/artifacts/<target>/. See fuzz/README.md.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
secs="${1:-30}"
shift || true
all=(query ibi_parse item_toml pair_list cgi_handler persistent_url)
if [ "$#" -gt 0 ]; then targets=("$@"); else targets=("${all[@]}"); fi
case "$secs" in '' | *[!0-9]*) echo "usage: fuzz/run.sh SECONDS [TARGET...]" >&2; exit 2 ;; esac

triple="$(rustc -vV | sed -n 's/^host: //p')"
target_dir="${CARGO_TARGET_DIR:-$here/target}"

# What `cargo fuzz build` passes, minus the nightly toolchain: RUSTC_BOOTSTRAP lets the
# stable compiler take -Z flags. --target keeps these flags off build scripts.
export RUSTC_BOOTSTRAP=1
export RUSTFLAGS="-Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares \
--cfg fuzzing -Clink-dead-code -Cdebug-assertions -Coverflow-checks \
-Zsanitizer=address -Cforce-frame-pointers"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_odr_violation=0:detect_leaks=1}"

echo "fuzz/run.sh: building ${targets[*]} ($triple)"
bins=()
for t in "${targets[@]}"; do bins+=(--bin "$t"); done
# Not --locked: the main crate's dependencies may move ahead of fuzz/Cargo.lock.
cargo build --release --target "$triple" --target-dir "$target_dir" "${bins[@]}"

work="$(mktemp -d -t ibi-archive-fuzz.XXXXXX)"
trap 'rm -rf "$work"' EXIT

status=0
for t in "${targets[@]}"; do
    bin="$target_dir/$triple/release/$t"
    mkdir -p "$work/$t" "artifacts/$t"
    case "$t" in
        query | cgi_handler) max_len=20000 ;;  # past the 16 KiB limit of a query string
        *) max_len=4096 ;;
    esac
    echo "fuzz/run.sh: $t for ${secs}s"
    set +e
    "$bin" "$work/$t" "corpus/$t" \
        -max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="artifacts/$t/" >"$work/$t.log" 2>&1
    rc=$?
    set -e
    grep -E '^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units|^stat::peak_rss_mb' "$work/$t.log" || true
    if [ "$rc" -ne 0 ]; then
        echo "fuzz/run.sh: $t FAILED (exit $rc); last lines of its log:" >&2
        tail -n 40 "$work/$t.log" >&2
        ls -l "artifacts/$t/" >&2 || true
        status=1
        break
    fi
done
if [ "$status" -eq 0 ]; then echo "fuzz/run.sh: ${#targets[@]} targets, no crash"; fi
exit "$status"
