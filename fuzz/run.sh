#!/usr/bin/env bash
# Coverage-guided fuzzing with cargo-afl (AFL++ on the stable toolchain).
#
#   fuzz/run.sh TARGET SECONDS   fuzz one target for SECONDS
#   fuzz/run.sh all SECONDS      fuzz every target for SECONDS each, in turn
#                                (FUZZ_JOBS=N: N targets at once)
#   fuzz/run.sh TARGET -E EXECS  fuzz one target for about EXECS executions
#   fuzz/run.sh build            only install and build (cargo-afl, AFL++,
#                                every target), fuzz nothing
#
# Targets: wire expr number input partiql mongo (see fuzz/README.md).
# Installs cargo-afl when missing and builds AFL++ once for this rustc.
# Findings go to fuzz/out/TARGET (or $FUZZ_OUT/TARGET); a second run of a
# target resumes its queue. Prints one summary line per target (executions,
# crashes, hangs) and exits 1 when any target saved a crash or a hang.
# Run it under `nice -n 19` on a shared machine.
set -euo pipefail

TARGETS=(wire expr number input partiql mongo)
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${FUZZ_OUT:-$HERE/out}"

usage() {
    echo "usage: fuzz/run.sh TARGET|all SECONDS  or  fuzz/run.sh TARGET -E EXECS  or  fuzz/run.sh build" >&2
    echo "targets: ${TARGETS[*]}" >&2
    exit 2
}

[ $# -ge 1 ] || usage
target="$1"
shift
build_only=0
if [ "$target" = build ]; then
    [ $# -eq 0 ] || usage
    build_only=1
    target=all
    limit=()
elif [ $# -lt 1 ]; then
    usage
elif [ "$1" = "-E" ]; then
    [ $# -eq 2 ] || usage
    limit=(-E "$2")
else
    [ $# -eq 1 ] || usage
    limit=(-V "$1")
fi

package_of() {
    case "$1" in
        mongo) echo dynaburst-fuzz-mongo ;;
        wire | expr | number | input | partiql) echo dynaburst-fuzz ;;
        *) echo "unknown target: $1" >&2; usage ;;
    esac
}

if [ "$target" = all ]; then
    selected=("${TARGETS[@]}")
else
    package_of "$target" > /dev/null
    selected=("$target")
fi

if ! cargo afl --version > /dev/null 2>&1; then
    echo "fuzz: installing cargo-afl" >&2
    cargo install --locked cargo-afl
fi
# Builds AFL++ for this rustc once; says so and fails when already built.
cargo afl config --build > /dev/null 2>&1 || true

cd "$HERE"
packages=()
for t in "${selected[@]}"; do
    p="$(package_of "$t")"
    [[ " ${packages[*]-} " == *" $p "* ]] || packages+=("$p")
done
# FUZZ_BUILD=0 runs the targets as last built (while another build holds
# the target directory, say).
if [ "${FUZZ_BUILD:-1}" != 0 ]; then
    for p in "${packages[@]}"; do
        cargo afl build --release --locked -p "$p"
    done
fi
[ "$build_only" = 0 ] || exit 0

# No terminal UI, no CPU binding (the cores are shared), resume a previous
# run's queue, and no fuss about a core_pattern we may not change.
export AFL_NO_UI=1 AFL_NO_AFFINITY=1 AFL_AUTORESUME=1 AFL_SKIP_CPUFREQ=1
export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_SKIP_CRASHES=1

fuzz_one() { # target: fuzzes it, says how it went; fails on a crash or a hang
    local t=$1 log="$OUT/$1/afl.log"
    # -t: a single input that runs over 1 s is a hang.
    if ! cargo afl fuzz "${limit[@]}" -t 1000 -i "$HERE/seeds/$t" -o "$OUT/$t" "$HERE/target/release/$t" \
        > "$log" 2>&1; then
        echo "fuzz: afl-fuzz failed on $t; the end of $log:"
        tail -20 "$log"
        return 1
    fi
    local stats="$OUT/$t/default/fuzzer_stats"
    field() { awk -F' *: *' -v k="$1" '$1 == k { print $2 }' "$stats"; }
    local crashes hangs
    crashes="$(field saved_crashes)"
    hangs="$(field saved_hangs)"
    echo "fuzz: $t: $(field execs_done) executions, $crashes crashes, $hangs hangs, $(field corpus_count) inputs in the queue ($(field execs_per_sec) per second)"
    if [ "$crashes" != 0 ] || [ "$hangs" != 0 ]; then
        echo "fuzz: $t found problems: $OUT/$t/default/crashes and hangs"
        return 1
    fi
}

# FUZZ_JOBS targets at once (default 1), each its own afl-fuzz on about one
# core: with FUZZ_JOBS=2 on two idle cores every target still gets its
# SECONDS of a whole core, in half the time. Each target's lines are
# printed when it ends, in order (on stderr when it failed).
jobs_max=${FUZZ_JOBS:-1}
failed=0
running=()
finish_oldest() {
    local t=${running[0]}
    running=("${running[@]:1}")
    if wait "${pids[$t]}"; then
        cat "$OUT/$t/summary.txt"
    else
        cat "$OUT/$t/summary.txt" >&2
        failed=1
    fi
}
declare -A pids
for t in "${selected[@]}"; do
    mkdir -p "$OUT/$t"
    fuzz_one "$t" > "$OUT/$t/summary.txt" 2>&1 &
    pids[$t]=$!
    running+=("$t")
    [ "${#running[@]}" -lt "$jobs_max" ] || finish_oldest
done
while [ "${#running[@]}" -gt 0 ]; do finish_oldest; done
exit "$failed"
