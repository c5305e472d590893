#!/usr/bin/env bash
# One command for proof on an NVIDIA GPU with a PyTorch: builds slipway-engine (and nccl_tests, qlora_tests)
# against the installed torch, then checks it against HF transformers / PEFT and on NCCL (each check_*.py says
# how, with its tolerances; tests/gpu/README.md has them all). On a GPU, in this order (most telling first):
#   score   fp32 and bf16 score against transformers' Llama, Mistral, Qwen2, Qwen3    (transformers)
#   lora    LoRA loss curve vs HF Trainer + PEFT, adapter in PeftModel, merge        (transformers, peft)
#   perf    tokens/s, MFU and peak memory vs HF Trainer + PEFT, ~1B Llama, seq 2048  (transformers, peft)
#   kernels the fused RMSNorm/SwiGLU/RoPE against the op-by-op path on the GPU (model_family_tests)
#   nf4     QLoRA's CUDA dequantization kernel against the CPU loop, bit for bit (qlora_tests)
#   resume  SIGTERM, checkpoint and exact resume with LoRA dropout on
#   nccl    nccl_tests (one rank) and bench-comm on NCCL
#   batches the Python copy of the engine's batch order (what HF is fed) against the engine's own losses
#   perf8b  perf on Llama-3-8B's shape, LoRA and QLoRA (long: past the default budget, so --only or --budget)
# Without a GPU (or with --cpu) the CPU-side parts that the GPU checks stand on: batches, resume on the CPU, and
# gloo (bench-comm on Gloo with one rank); then exit 77 (skipped) when they pass.
# Verdicts are tests/gpu/summary.py's: a check passes only when it exited 0 AND its result.json (or GoogleTest
# report) shows it compared at least one item, so a check that ran nothing fails.
#
# Usage: tests/gpu/run.sh [--build-only] [--cpu] [--only CHECK[,CHECK...]] [--budget SECONDS]
#   --cpu     run the CPU-side parts only, even where a GPU is present
#   --only    run only these checks (the others are not listed)
#   --budget  seconds, counted from run.sh's start (the build included), that the run may take: a check whose
#             expected time (a table in run.sh) no longer fits is skipped and recorded as "SKIP (budget: ...)",
#             and a step still running when the budget is spent is stopped (FAIL). 0: none. Default 540 where
#             torch sees a GPU (a lent GPU's 10-minute command, less a minute for the summary and transfers),
#             none without one (a cold build on a few cores, as tests/compat/torch2.sh's gpu step, may take long).
# Environment: PYTHON (default python3), BUILD_DIR (default tests/gpu/build/torch-<version>),
#   RESULTS (default tests/gpu/results): summary.json, summary.md, run.log (all that run.sh printed) and logs/
#     (the logs of the steps that failed, at most 5): 8 files at most, so a device run's $OUT can be RESULTS;
#   WORK (default: work beside the build folder, tests/gpu/build/work): each step's log NAME.log and folder
#     NAME/ (models, result.json), checks.tsv (each step's exit code, seconds, skip reason) and env.json, which
#     summary.py reads;
#   VENDOR (default tests/gpu/vendor; filled by vendor.sh; when absent the system's packages are used),
#   JOBS (build jobs, default all cores),
#   PREBUILT (a build folder of this tree against the same torch, with the binaries in bin/: the build is only
#     configured, to check that the vendor folder and torch are found, and those binaries are run; the torch2
#     CI leg passes its one engine build here).
# Exit: 0 all run checks passed, 1 a check or the build failed or no check ran, 77 no GPU (CPU-side parts
#   passed).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"
results="${RESULTS:-$here/results}"
# Beside the build folder, so wherever the build may write (tests/compat/torch2.sh mounts the source read-only).
work="${WORK:-$(dirname "${BUILD_DIR:-$here/build/torch}")/work}"
vendor="${VENDOR:-$here/vendor}"
jobs="${JOBS:-$(nproc)}"
build_only=0 cpu_only=0 only="" budget=""
while [ $# -gt 0 ]; do
    case "$1" in
    --build-only) build_only=1 ;;
    --cpu) cpu_only=1 ;;
    --only | --budget)
        [ $# -ge 2 ] || { echo "run.sh: $1 takes a value (see --help)" >&2; exit 2; }
        if [ "$1" = --only ]; then only=$2; else budget=$2; fi
        shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
if [ -n "$budget" ] && ! [[ "$budget" =~ ^[0-9]+$ ]]; then
    echo "run.sh: --budget takes whole seconds, not $budget" >&2
    exit 2
fi

# Expected seconds of each step on a lent H200 with 16 cores, measured there (2026-11-26: build 88, score 31,
# lora 29, nf4 3, resume 8, nccl 7, batches 5; perf 98 before the engine's fast paths), with some margin;
# kernels and gloo guessed. A check starts only while its figure fits in the budget left.
declare -A expected=([build]=90 [score]=40 [lora]=40 [perf]=110 [kernels]=15 [nf4]=10 [resume]=15 [nccl]=15
    [batches]=10 [gloo]=20 [perf8b]=240)

# Only this run's files: RESULTS may be a device run's $OUT, and a stale result.json must not vouch for a step.
mkdir -p "$results" "$work" || exit 1
rm -rf "${results:?}/logs" "$results/summary.json" "$results/summary.md" "${work:?}/checks.tsv" "$work/env.json" \
    "$work/build.log"

record() {  # NAME EXIT SECONDS REASON: a line of checks.tsv (EXIT "-": skipped)
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${expected[$1]:-}" "$4" >>"$work/checks.tsv"
}

limit=()
time_limit() {  # limit=(timeout ... SECONDS_LEFT) under a budget; fails when none is left
    limit=()
    [ "$budget" -gt 0 ] || return 0
    local left=$((budget - SECONDS))
    [ "$left" -gt 0 ] || return 1
    limit=(timeout -k 10 "$left")  # its own process group: the check's children go too
}

summarize() {
    echo
    "$python" "$here/summary.py" "$work" "$results" --budget "$budget" --elapsed "$SECONDS" --device "$device"
}

main() {
    local probe torch_version torch_prefix has_gpu
    probe="$("$python" - <<'PY'
import importlib.metadata as metadata
import json
import platform

import torch


def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


gpu = torch.cuda.get_device_properties(0) if torch.cuda.is_available() else None
print(torch.__version__)
print(torch.utils.cmake_prefix_path)
print(int(gpu is not None))
print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, "transformers": version("transformers"),
                  "peft": version("peft"), "python": platform.python_version(),
                  "gpu": gpu.name if gpu else None,
                  "gpu_memory_gib": round(gpu.total_memory / 2**30, 1) if gpu else None}))
PY
)" || {
        echo "run.sh: $python cannot import torch (set PYTHON)" >&2
        return 1
    }
    torch_version="$(sed -n 1p <<<"$probe")"
    torch_prefix="$(sed -n 2p <<<"$probe")"
    has_gpu="$(sed -n 3p <<<"$probe")"
    sed -n 4p <<<"$probe" >"$work/env.json"
    device=cpu
    [ "$has_gpu" = 1 ] && [ "$cpu_only" = 0 ] && device=cuda
    if [ -z "$budget" ]; then
        budget=0
        [ "$has_gpu" = 1 ] && budget=540
    fi
    build="${BUILD_DIR:-$here/build/torch-$torch_version}"
    echo "== build: torch $torch_version ($python), build dir $build"
    [ "$budget" -gt 0 ] && echo "   budget: $budget s from run.sh's start, $((budget - SECONDS)) s left"

    # --- build ---------------------------------------------------------------------------------------
    local prefix="$torch_prefix" generator=() targets=(slipway-engine) rc=0 start=$SECONDS
    if [ -d "$vendor/usr" ]; then
        prefix="$vendor/usr;$torch_prefix"
        echo "   vendor folder: $vendor"
    else
        echo "   no vendor folder ($vendor): the system's nlohmann-json, CLI11, PCRE2, ICU, GoogleTest, Gloo"
    fi
    command -v ninja >/dev/null && generator=(-G Ninja)
    if [ -f "$build/CMakeCache.txt" ] && ! grep -q "^CMAKE_PREFIX_PATH:UNINITIALIZED=$prefix\$" "$build/CMakeCache.txt"; then
        rm -rf "$build"  # another torch or vendor folder: configure afresh
    fi
    time_limit || rc=124
    if [ "$rc" = 0 ]; then
        "${limit[@]}" cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_PREFIX_PATH="$prefix" -DSLIPWAY_BUILD_APP=OFF -DSLIPWAY_BUILD_REMOTE=OFF \
            -DSLIPWAY_BUILD_TESTS=ON >"$work/build.log" 2>&1 || rc=$?
    fi
    if [ "$rc" = 0 ]; then
        echo "   found (CMakeCache.txt):"
        grep -E '^(nlohmann_json_DIR|CLI11_DIR|GTest_DIR|ICU_INCLUDE_DIR|ICU_UC_LIBRARY_RELEASE|pkgcfg_lib_PCRE2_pcre2-8|Torch_DIR|SLIPWAY_WITH_CUDA)[:=]' \
            "$build/CMakeCache.txt" | sed 's/^/     /'
        grep -q '^SLIPWAY_WITH_CUDA:BOOL=ON' "$build/CMakeCache.txt" && targets+=(nccl_tests qlora_tests model_family_tests)
        time_limit || rc=124
    fi
    if [ "$rc" = 0 ] && [ -n "${PREBUILT:-}" ]; then
        local target
        for target in "${targets[@]}"; do
            [ -x "$PREBUILT/bin/$target" ] || { echo "   PREBUILT=$PREBUILT has no bin/$target" >>"$work/build.log"; rc=1; }
        done
        [ "$rc" = 0 ] && echo "   configured only; the binaries are PREBUILT's: $PREBUILT/bin" && build=$PREBUILT
    elif [ "$rc" = 0 ]; then
        "${limit[@]}" cmake --build "$build" --target "${targets[@]}" -j"$jobs" >>"$work/build.log" 2>&1 || rc=$?
    fi
    record build "$rc" "$((SECONDS - start))" ""
    if [ "$rc" != 0 ]; then
        tail -40 "$work/build.log"
        echo "run.sh: configure or build failed (exit $rc; $work/build.log)"
        summarize
        return
    fi
    engine="$build/bin/slipway-engine"
    export SLIPWAY_ENGINE="$engine"  # gpu_common's engine
    echo "   built: ${targets[*]} in $((SECONDS - start)) s"
    if [ "$build_only" = 1 ]; then
        return 0
    fi

    # --- checks --------------------------------------------------------------------------------------
    if [ "$device" = cuda ]; then
        "$python" -c 'import torch; p = torch.cuda.get_device_properties(0); print(f"== GPU: {p.name}, {p.total_memory / 2**30:.0f} GiB")'
        local has_hf
        has_hf="$("$python" -c 'import transformers, peft' >/dev/null 2>&1 && echo 1 || echo 0)"
        for name in score lora kernels perf; do
            if [ "$name" = kernels ]; then
                # The fused RMSNorm, SwiGLU and RoPE (engine/model/fused_ops.h) against the op-by-op path on
                # the GPU, forward and backward, fp32 and bf16 (tests/engine/fused_ops_test.cpp's cuda cases).
                if [ -x "$build/bin/model_family_tests" ]; then
                    run_check kernels "$build/bin/model_family_tests" --gtest_filter='*FusedOps*cuda*' \
                        --gtest_output="json:$work/kernels/gtest.json"
                else
                    skip_check kernels "built without CUDA"
                fi
            elif [ "$has_hf" = 1 ]; then
                run_check "$name" "$python" "$here/check_$name.py" --out "$work/$name"
            else
                skip_check "$name" "$python lacks transformers or peft"
            fi
        done
        if [ -x "$build/bin/qlora_tests" ]; then  # built where CUDA was found: the kernel is in
            # No --gtest_fail_if_no_test_run: GoogleTest 1.12 prints its help for it and exits 0. summary.py
            # counts the tests in the JSON report instead.
            run_check nf4 "$build/bin/qlora_tests" --gtest_filter='Nf4Weight.Gpu*' \
                --gtest_output="json:$work/nf4/gtest.json"
        else
            skip_check nf4 "built without CUDA: ATen ops dequantize"
        fi
        run_check resume "$python" "$here/check_resume.py" --device cuda --out "$work/resume"
        run_check nccl "$here/check_comm.sh" "$engine" nccl "$work/nccl" "$build/bin/nccl_tests"
        run_check batches "$python" "$here/check_batches.py" --out "$work/batches"
        if [ "$has_hf" = 1 ]; then
            run_check perf8b "$python" "$here/check_perf.py" --model 8b --out "$work/perf8b"
        else
            skip_check perf8b "$python lacks transformers or peft"
        fi
    else
        [ "$has_gpu" = 1 ] || echo "== no CUDA GPU visible to torch: the CPU-side parts only, then exit 77"
        run_check batches "$python" "$here/check_batches.py" --out "$work/batches"
        run_check resume "$python" "$here/check_resume.py" --device cpu --out "$work/resume"
        run_check gloo "$here/check_comm.sh" "$engine" gloo "$work/gloo"
    fi
    summarize
}

wanted() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
run_check() {  # NAME COMMAND...: output to WORK/NAME.log and run.log, a line in checks.tsv; summary.py judges
    local name=$1 need=${expected[$1]:-0} start rc
    shift
    wanted "$name" || return 0
    echo
    echo "== $name"
    if [ "$budget" -gt 0 ] && [ "$need" -gt $((budget - SECONDS)) ] || ! time_limit; then
        skip_check "$name" "budget: needs ~$need s, $((SECONDS < budget ? budget - SECONDS : 0)) s left"
        return 0
    fi
    rm -rf "${work:?}/$name" "$work/$name.log"
    mkdir -p "$work/$name"
    start=$SECONDS
    "${limit[@]}" "$@" 2>&1 | tee "$work/$name.log"
    rc=${PIPESTATUS[0]}
    record "$name" "$rc" "$((SECONDS - start))" ""
    echo "-- $name: exit $rc after $((SECONDS - start)) s (expected ~$need s)"
}
skip_check() {  # NAME WHY
    wanted "$1" || return 0
    record "$1" - - "$2"
    echo "-- $1: SKIP ($2)"
}

export PYTHON="$python"  # check_comm.sh's interpreter too
export PYTHONUNBUFFERED=1  # a check stopped by the budget still leaves the lines it printed
device=cpu build="" engine=""
main 2>&1 | tee "$results/run.log"
exit "${PIPESTATUS[0]}"
