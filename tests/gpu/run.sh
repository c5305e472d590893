#!/usr/bin/env bash
# One command for proof on an NVIDIA GPU with a PyTorch: builds slipway-engine (and nccl_tests) against the
# installed torch, then checks it against HF transformers / PEFT and on NCCL (each check_*.py says how, with its tolerances):
#   score   fp32 and bf16 score against LlamaForCausalLM and MistralForCausalLM     (transformers)
#   lora    LoRA loss curve vs HF Trainer + PEFT, adapter in PeftModel, merge        (transformers, peft)
#   perf    tokens/s, MFU and peak memory vs HF Trainer + PEFT, ~1B Llama, seq 2048  (transformers, peft)
#   nccl    nccl_tests (one rank) and bench-comm on NCCL
#   resume  SIGTERM, checkpoint and exact resume with LoRA dropout on
#   nf4     QLoRA's CUDA dequantization kernel against the CPU loop, bit for bit (qlora_tests)
# and, on any machine, the CPU-side parts that the GPU checks stand on:
#   batches the Python copy of the engine's batch order (what HF is fed) against the engine's own losses
#   resume  the same script on the CPU
#   gloo    bench-comm on Gloo with one rank
# Without a GPU it builds, runs the CPU-side parts and exits 77 (skipped) when they pass.
#
# Usage: tests/gpu/run.sh [--build-only] [--cpu] [--only CHECK[,CHECK...]]
#   --cpu   run the CPU-side parts only, even where a GPU is present
# Environment: PYTHON (default python3), BUILD_DIR (default tests/gpu/build/torch-<version>),
#   RESULTS (default tests/gpu/results), VENDOR (default tests/gpu/vendor; filled by vendor.sh; when absent
#   the system's packages are used), JOBS (build jobs, default all cores).
# Exit: 0 all run checks passed, 1 a check failed or the build failed, 77 no GPU (CPU-side parts passed).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"
results="${RESULTS:-$here/results}"
vendor="${VENDOR:-$here/vendor}"
jobs="${JOBS:-$(nproc)}"
build_only=0 cpu_only=0 only=""
while [ $# -gt 0 ]; do
    case "$1" in
    --build-only) build_only=1 ;;
    --cpu) cpu_only=1 ;;
    --only) only="$2"; shift ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

torch_info="$("$python" -c 'import torch; print(torch.__version__); print(torch.utils.cmake_prefix_path)')" || {
    echo "run.sh: $python cannot import torch (set PYTHON)" >&2
    exit 1
}
torch_version="$(sed -n 1p <<<"$torch_info")"
torch_prefix="$(sed -n 2p <<<"$torch_info")"
build="${BUILD_DIR:-$here/build/torch-$torch_version}"
mkdir -p "$results"
echo "== build: torch $torch_version ($python), build dir $build"

# --- build -------------------------------------------------------------------------------------------
prefix="$torch_prefix"
if [ -d "$vendor/usr" ]; then
    prefix="$vendor/usr;$torch_prefix"
    echo "   vendor folder: $vendor"
else
    echo "   no vendor folder ($vendor): the system's nlohmann-json, CLI11, PCRE2, ICU, GoogleTest, Gloo"
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ -f "$build/CMakeCache.txt" ] && ! grep -q "^CMAKE_PREFIX_PATH:UNINITIALIZED=$prefix\$" "$build/CMakeCache.txt"; then
    rm -rf "$build"  # another torch or vendor folder: configure afresh
fi
cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DSLIPWAY_BUILD_APP=OFF -DSLIPWAY_BUILD_REMOTE=OFF -DSLIPWAY_BUILD_TESTS=ON >"$results/configure.log" 2>&1 || {
    tail -30 "$results/configure.log"
    echo "run.sh: configure failed ($results/configure.log)"
    exit 1
}
echo "   found (CMakeCache.txt):"
grep -E '^(nlohmann_json_DIR|CLI11_DIR|GTest_DIR|ICU_INCLUDE_DIR|ICU_UC_LIBRARY_RELEASE|pkgcfg_lib_PCRE2_pcre2-8|Torch_DIR|SLIPWAY_WITH_CUDA)[:=]' \
    "$build/CMakeCache.txt" | sed 's/^/     /'
targets=(slipway-engine)
grep -q '^SLIPWAY_WITH_CUDA:BOOL=ON' "$build/CMakeCache.txt" && targets+=(nccl_tests qlora_tests)
cmake --build "$build" --target "${targets[@]}" -j"$jobs" >"$results/build.log" 2>&1 || {
    tail -40 "$results/build.log"
    echo "run.sh: build failed ($results/build.log)"
    exit 1
}
engine="$build/bin/slipway-engine"
echo "   built: ${targets[*]}"
if [ "$build_only" = 1 ]; then
    exit 0
fi

# --- checks ------------------------------------------------------------------------------------------
has_gpu="$("$python" -c 'import torch; print(int(torch.cuda.is_available()))')"
has_hf="$("$python" -c 'import transformers, peft' >/dev/null 2>&1 && echo 1 || echo 0)"
device=cpu
if [ "$has_gpu" = 1 ] && [ "$cpu_only" = 0 ]; then
    device=cuda
    "$python" -c 'import torch; p = torch.cuda.get_device_properties(0); print(f"== GPU: {p.name}, {p.total_memory / 2**30:.0f} GiB")'
else
    [ "$has_gpu" = 1 ] || echo "== no CUDA GPU visible to torch: the CPU-side parts only, then exit 77"
fi
export SLIPWAY_ENGINE="$engine"
declare -A outcome=()
order=()
wanted() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
run_check() {  # NAME COMMAND...: logs to results/NAME.log, PASS on exit 0
    local name=$1
    shift
    wanted "$name" || return 0
    order+=("$name")
    echo
    echo "== $name"
    if "$@" 2>&1 | tee "$results/$name.log"; then outcome[$name]=PASS; else outcome[$name]=FAIL; fi
    echo "-- $name: ${outcome[$name]}"
}
skip_check() {  # NAME WHY
    wanted "$1" || return 0
    order+=("$1")
    outcome[$1]="SKIP ($2)"
}

run_check batches "$python" "$here/check_batches.py" --out "$results/batches"
run_check resume "$python" "$here/check_resume.py" --device "$device" --out "$results/resume"
if [ "$device" = cpu ]; then
    run_check gloo "$here/check_comm.sh" "$engine" gloo "$results/gloo"
else
    run_check nccl "$here/check_comm.sh" "$engine" nccl "$results/nccl" "$build/bin/nccl_tests"
    if [ -x "$build/bin/qlora_tests" ]; then  # built where CUDA was found: the kernel is in
        run_check nf4 "$build/bin/qlora_tests" --gtest_filter='Nf4Weight.Gpu*' --gtest_fail_if_no_test_run
    else
        skip_check nf4 "built without CUDA: ATen ops dequantize"
    fi
    if [ "$has_hf" = 1 ]; then
        run_check score "$python" "$here/check_score.py" --out "$results/score"
        run_check lora "$python" "$here/check_lora.py" --out "$results/lora"
        run_check perf "$python" "$here/check_perf.py" --out "$results/perf"
    else
        for name in score lora perf; do skip_check "$name" "$python lacks transformers or peft"; done
    fi
fi

echo
echo "== summary (torch $torch_version, device $device; logs in $results)"
echo "| check | result |"
echo "|---|---|"
failed=0
for name in "${order[@]}"; do
    echo "| $name | ${outcome[$name]} |"
    [ "${outcome[$name]}" = FAIL ] && failed=1
done
if [ "$failed" = 1 ]; then exit 1; fi
if [ "$device" = cpu ] && [ "$has_gpu" = 0 ]; then exit 77; fi
exit 0
