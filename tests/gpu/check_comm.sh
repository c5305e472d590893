#!/usr/bin/env bash
# Collectives with one rank: the engine's NCCL GoogleTest suite (nccl_tests, when given) and `bench-comm` on
# BACKEND (nccl on a GPU, gloo on a CPU) through `launch --nproc 1`: every size's sum must be correct and
# the backend the one asked for. Prints a table of time, algbw and busbw per size and PASS or FAIL, and writes
# OUT_DIR/result.json (gpu_common.verdict) with "compared": the sizes checked plus the nccl_tests passed. It
# fails when bench-comm checked other than the 3 sizes asked for, or nccl_tests ran no test (counted in its
# JSON report: a GoogleTest that exits 0 without running a test proves nothing).
# Usage: check_comm.sh SLIPWAY_ENGINE BACKEND OUT_DIR [NCCL_TESTS]
set -uo pipefail
engine=$1 backend=$2 out=$3 nccl_tests=${4:-}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
sizes=1M,16M,256M
rm -rf "$out" && mkdir -p "$out"
nccl_rc=-  # not run
if [ -n "$nccl_tests" ]; then
    nccl_rc=0
    "$nccl_tests" --gtest_output="json:$out/nccl_tests.json" >"$out/nccl_tests.log" 2>&1 || nccl_rc=$?
fi
bench_rc=0
"$engine" launch --nproc 1 -- bench-comm --backend "$backend" --sizes "$sizes" --iters 10 --json \
    >"$out/bench-comm.log" 2>&1 || bench_rc=$?
"$python" - "$here" "$out" "$backend" "$sizes" "$nccl_rc" "$bench_rc" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[1])
import gpu_common as g
from summary import gtest_counts
out, backend, sizes, nccl_rc, bench_rc = sys.argv[2], sys.argv[3], sys.argv[4].split(","), sys.argv[5], sys.argv[6]
failures, figures, compared = [], {"backend": backend}, 0
if nccl_rc != "-":
    counts = gtest_counts(os.path.join(out, "nccl_tests.json")) or {"passed": 0, "skipped": 0, "failed": 0}
    figures["nccl_tests"] = counts
    print(f"nccl_tests: {counts['passed']} passed, {counts['skipped']} skipped, {counts['failed']} failed")
    if nccl_rc != "0" or counts["failed"] or counts["passed"] < 1:
        print(open(os.path.join(out, "nccl_tests.log")).read()[-3000:])
        failures.append(f"nccl_tests: exit code {nccl_rc}, {counts['passed']} tests passed, {counts['failed']} "
                        f"failed ({out}/nccl_tests.log)")
    compared += counts["passed"]
log = open(os.path.join(out, "bench-comm.log")).read()
lines = [l.split(": ", 1)[1] for l in log.splitlines() if '"schema":"slipway.bench-comm/1"' in l]
if bench_rc != "0" or not lines:
    print(log[-2000:])
    failures.append(f"bench-comm: exit code {bench_rc}" + ("" if lines else ", printed no result"))
if lines:
    r = json.loads(lines[0])
    print(f"bench-comm: backend {r['backend']}, {r['world_size']} rank(s), {r['iters']} iterations")
    print("| bytes | time (us) | algbw (GB/s) | busbw (GB/s) | correct |\n|---|---|---|---|---|")
    for x in r["results"]:
        print(f"| {x['bytes']} | {x['time_us']:.1f} | {x['algbw_gbps']:.1f} | {x['busbw_gbps']:.1f} | {x['correct']} |")
    bad = [x["bytes"] for x in r["results"] if not x["correct"]]
    figures["sizes"] = {str(x["bytes"]): {"busbw_gbps": x["busbw_gbps"], "correct": x["correct"]}
                        for x in r["results"]}
    if r["backend"] != backend or bad:
        failures.append(f"backend {r['backend']} (wanted {backend}), wrong sums at sizes {bad}")
    if len(r["results"]) != len(sizes):
        failures.append(f"bench-comm checked {len(r['results'])} sizes, asked for {len(sizes)} ({','.join(sizes)})")
    compared += len(r["results"])
sys.exit(g.verdict(failures, out, figures, compared=compared))
PY
