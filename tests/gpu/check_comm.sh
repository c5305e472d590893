#!/usr/bin/env bash
# Collectives with one rank: the engine's NCCL GoogleTest suite (nccl_tests, when given) and `bench-comm` on
# BACKEND (nccl on a GPU, gloo on a CPU) through `launch --nproc 1`: every size's sum must be correct and
# the backend the one asked for. Prints a table of time, algbw and busbw per size and PASS or FAIL.
# Usage: check_comm.sh SLIPWAY_ENGINE BACKEND OUT_DIR [NCCL_TESTS]
set -uo pipefail
engine=$1 backend=$2 out=$3 nccl_tests=${4:-}
python="${PYTHON:-python3}"
rm -rf "$out" && mkdir -p "$out"
failed=0
if [ -n "$nccl_tests" ]; then
    if "$nccl_tests" --gtest_output="xml:$out/nccl_tests.xml" >"$out/nccl_tests.log" 2>&1; then
        echo "nccl_tests: $(grep -c '^\[       OK \]' "$out/nccl_tests.log") passed, $(grep -c '^\[  SKIPPED \]' "$out/nccl_tests.log") skipped"
    else
        tail -30 "$out/nccl_tests.log"
        echo "nccl_tests failed ($out/nccl_tests.log)"
        failed=1
    fi
fi
"$engine" launch --nproc 1 -- bench-comm --backend "$backend" --sizes 1M,16M,256M --iters 10 --json \
    >"$out/bench-comm.log" 2>&1 || failed=1
"$python" - "$out/bench-comm.log" "$backend" <<'PY' || failed=1
import json, sys
lines = [l.split(": ", 1)[1] for l in open(sys.argv[1]) if '"schema":"slipway.bench-comm/1"' in l]
if not lines:
    sys.exit(open(sys.argv[1]).read()[-2000:] + "\nbench-comm printed no result")
r = json.loads(lines[0])
print(f"bench-comm: backend {r['backend']}, {r['world_size']} rank(s), {r['iters']} iterations")
print("| bytes | time (us) | algbw (GB/s) | busbw (GB/s) | correct |\n|---|---|---|---|---|")
for x in r["results"]:
    print(f"| {x['bytes']} | {x['time_us']:.1f} | {x['algbw_gbps']:.1f} | {x['busbw_gbps']:.1f} | {x['correct']} |")
bad = [x["bytes"] for x in r["results"] if not x["correct"]]
if r["backend"] != sys.argv[2] or bad:
    sys.exit(f"backend {r['backend']} (wanted {sys.argv[2]}), wrong sums at sizes {bad}")
PY
if [ "$failed" = 0 ]; then echo PASS; else echo FAIL; fi
exit "$failed"
