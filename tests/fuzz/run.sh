#!/usr/bin/env bash
# The `fuzz` ctest label (issue 14): builds the libFuzzer harnesses with clang-14 (fuzzer, ASan, UBSan;
# only the torch-free libraries) in their own folder, runs each for a bounded time, and tabulates what
# they did. A crash (or a failed invariant) fails the target's test and prints the saved input.
#   run.sh build  FUZZ_DIR
#   run.sh run    FUZZ_DIR TARGET SEED...   (SLIPWAY_FUZZ_SECONDS per target, default 5 in CI's `fuzz`
#                                               label: with the cold build about 5 min on 2 cores; the
#                                               `fuzz-long` label, -DSLIPWAY_FUZZ_LONG=ON, runs 600 each)
#   run.sh report FUZZ_DIR
# SLIPWAY_BUILD_LOCK names a lock file to hold while compiling (machines shared with other builds).
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
mode=$1
dir=$2

with_lock() {
  if [ -n "${SLIPWAY_BUILD_LOCK:-}" ]; then flock "$SLIPWAY_BUILD_LOCK" "$@"; else "$@"; fi
}

case "$mode" in
  build)
    start=$(date +%s)
    cmake -S "$source_dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DSLIPWAY_FUZZ=ON \
      -DSLIPWAY_BUILD_APP=OFF -DSLIPWAY_BUILD_TESTS=OFF -DSLIPWAY_WITH_CUDA=OFF >"$dir.configure.log" 2>&1 ||
      { cat "$dir.configure.log"; exit 1; }
    with_lock cmake --build "$dir/build" --target fuzzers -j2
    mkdir -p "$dir/results"
    rm -f "$dir/results"/*.tsv
    echo "fuzz build: $(( $(date +%s) - start )) s"
    ;;
  run)
    target=$3
    shift 3
    seconds=${SLIPWAY_FUZZ_SECONDS:-5}
    work="$dir/work/$target"
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/crashes" "$dir/results"
    # libFuzzer adds what it finds to the first folder: a copy, never the source tree. Inputs are capped at
    # 16 KiB (longer seeds are cut): more executions in the bounded time; size limits have their own tests.
    for seed in "$@"; do
      if [ -d "$seed" ]; then cp -r "$seed"/. "$work/corpus/"; else cp "$seed" "$work/corpus/"; fi
    done
    regressions="$source_dir/tests/fuzz/regressions/$target"
    [ -d "$regressions" ] && cp -r "$regressions"/. "$work/corpus/"
    rc=0
    started=$(date +%s)
    ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$dir/build/bin/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
      -print_final_stats=1 -artifact_prefix="$work/crashes/" "$work/corpus" >"$work/log.txt" 2>&1 || rc=$?
    ran=$(($(date +%s) - started))  # less than $seconds when a crash ended it
    execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$work/log.txt" | tail -1)
    crashes=$(find "$work/crashes" -type f | wc -l)
    printf '%s\t%s\t%s\t%s\n' "$target" "$ran" "${execs:-0}" "$crashes" >"$dir/results/$target.tsv"
    echo "fuzz_$target: ${execs:-0} executions in $ran s (of $seconds), $crashes crash(es), exit $rc"
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
      tail -n 60 "$work/log.txt"
      for crash in "$work/crashes"/*; do
        [ -f "$crash" ] && echo "crashing input: $crash (add it to $regressions/ once fixed)"
      done
      exit 1
    fi
    ;;
  report)
    printf '%-14s %8s %12s %8s\n' target seconds executions crashes
    cat "$dir/results"/*.tsv 2>/dev/null | while IFS=$'\t' read -r t s e c; do
      printf '%-14s %8s %12s %8s\n' "$t" "$s" "$e" "$c"
    done
    ;;
  *)
    echo "usage: run.sh build|run|report FUZZ_DIR [TARGET SEED...]" >&2
    exit 2
    ;;
esac
