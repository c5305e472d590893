#!/usr/bin/env bash
# The engine on LibTorch 2.x, built and tested for real: the steps of ctest's `torch2` and `torch-latest`
# labels. Each step runs inside the cached Debian root of TORCH2_SUITE (torch2_root.sh: trixie, the default,
# has libtorch-dev + python3-torch 2.6; forky has 2.14 and HF transformers) with this source tree mounted at
# /src/slipway (in_root.sh). Builds live in the root (/build/*-<checkout>, /src/build) and compile through
# ccache there, so a second CI run on the same machine recompiles little.
# Usage: torch2.sh CACHE_DIR SOURCE_DIR STEP [ARG...]; STEP is one of
#   root                 make or reuse the root
#   build [TARGET...]    configure and build the engine and its test suites against LibTorch 2.x (only the
#                        TARGETs this tree has, when given), and compile c10d's NCCL branch (only NGC's
#                        torch has ProcessGroupNCCL) syntax-only
#   compile              configure, and compile syntax-only just the translation units with a TORCH_VERSION_
#                        branch (syntax_check.py) and c10d's NCCL branch: the version check without a build
#   suite LABEL [SKIP]   run the inner ctest label LABEL, leaving out tests that also carry a label matching
#                        the regex SKIP (tests with two labels run once)
#   reference            the built engine against HF transformers and tokenizers on CPU (hf_reference.py;
#                        forky's root has them)
#   venv                 make or reuse the venv of the pinned PyPI references in the root (prints its path last)
#   pyref SCRIPT [ARG...] a check against the pinned PyPI references (tests/reference/requirements.txt: peft,
#                        bitsandbytes, lm-eval, ...) in a venv over the root's python3 (tests/reference/venv.sh,
#                        cached in the root): python SCRIPT --engine ENGINE --work DIR ARG... (SCRIPT relative
#                        to the source tree; DIR a fresh folder in the build for its files)
#   gpu                  tests/gpu/run.sh in the root with the vendor folder: its build and CPU-side parts
#   dockerfile SLIPWAY   render a run's Dockerfile with the app's CLI and run its engine stage in the root
# Exit 77 (skip) when the root cannot be made here (no mirror, not root).
set -euo pipefail
cache_dir=$1 source_dir=$(cd "$2" && pwd) step=$3
shift 3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
suite=${TORCH2_SUITE:-trixie}
root=$cache_dir/$suite-root
jobs=${TORCH2_JOBS:-2}
# Build folders in the root are per checkout (two checkouts' runs must not share one), beside the source
# (/src/slipway) as the Dockerfile's /src/build is: with root_ccache.sh's base_dir their compile commands are
# alike, so a fresh clone and the Dockerfile stage compile from the cache. The two most recently used of each
# kind are kept.
key=$(printf '%s' "$source_dir" | sha1sum | cut -c1-12)
build_dir=/src/torch2-$key gpu_dir=/build/gpu-$key
prune_builds() {  # parent folder in the root, kind: torch2 or gpu
  find "$root$1" -mindepth 1 -maxdepth 1 -name "$2-*" -printf '%T@ %p\n' 2>/dev/null | sort -rn |
    tail -n +3 | cut -d' ' -f2- | xargs -r rm -rf
}
in_root() { bash "$here/in_root.sh" "$root" "$source_dir" "$@"; }
need_root() {
  [ -f "$root/.slipway-packages" ] || { echo "SKIP: no $suite root at $root (its root step skipped or failed)"; exit 77; }
}
reference_venv() {  # the root's venv of tests/reference/requirements.txt, cached in the root; its path last
  in_root bash /src/slipway/tests/reference/venv.sh /src/slipway/tests/reference/requirements.txt /usr/bin/python3
}
# shellcheck source=SCRIPTDIR/root_ccache.sh
source "$here/root_ccache.sh"

case "$step" in
root)
  exec bash "$here/torch2_root.sh" "$cache_dir"
  ;;
build | compile)
  need_root
  mkdir -p "$root$build_dir" && touch "$root$build_dir"
  prune_builds /src torch2
  cmake_args=()
  # CUDA 13's nvcc refuses forky's g++ 16 and, told to go on, cannot parse its libstdc++: the CUDA-only
  # targets (NF4 kernel, raw NCCL; no torch in them) are built in the trixie root and on the host instead.
  # process_group.cpp's NCCL branch is still compiled below, with g++.
  [ "$suite" != forky ] || cmake_args+=(-DSLIPWAY_WITH_CUDA=OFF)
  # shellcheck disable=SC2016  # expanded by the shell in the root
  in_root "${ccache_env[@]}" bash -c '
    set -euo pipefail
    step=$1 jobs=$2 build=$3 targets=$4
    shift 4
    python3 -c "import torch; print(\"python3-torch\", torch.__version__)"
    ccache --zero-stats >/dev/null
    # -O1: these builds check that the engine compiles and behaves on LibTorch 2.x, not how fast it runs, and a
    # torch translation unit compiles faster than at -O3 (the host builds the release).
    cmake -S /src/slipway -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" \
      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DSLIPWAY_BUILD_APP=OFF -DSLIPWAY_BUILD_REMOTE=OFF \
      -DSLIPWAY_BUILD_TESTS=ON -DSLIPWAY_TORCH2_TESTS=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "$@"
    started=$(date +%s)
    check=/src/slipway/tests/compat/syntax_check.py
    if [ "$step" = compile ]; then
      JOBS=$jobs python3 "$check" "$build" --torch-branches
      echo "torch2 compile: $(( $(date +%s) - started )) s"
    else
      target_args=()
      if [ -n "$targets" ]; then
        # Only the targets this configuration has (the CUDA ones need /usr/local/cuda).
        known=$(cmake --build "$build" --target help | awk "{print \$2}")
        for target in $targets; do
          if grep -qx "$target" <<<"$known"; then target_args+=("$target"); fi
        done
        echo "torch2 build: targets ${target_args[*]}"
        target_args=(--target "${target_args[@]}")
      fi
      cmake --build "$build" -j"$jobs" "${target_args[@]}"
      echo "torch2 build: $(( $(date +%s) - started )) s; ccache: $(ccache --print-stats | awk -F"\t" "/^(direct|preprocessed)_cache_hit|^cache_miss/ {printf \"%s=%s \", \$1, \$2}")"
    fi
    # c10d ProcessGroupNCCL exists only in CUDA builds of torch (NGC): its branch of process_group.cpp is
    # compiled syntax-only, with the flags the real build used for that file.
    if [ -f /usr/local/cuda/include/nccl.h ]; then
      # The CPU-only package lacks the generated CUDA config header that NGC'"'"'s torch has.
      mkdir -p "$build/cuda-stub/c10/cuda/impl"
      printf "#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n" > "$build/cuda-stub/c10/cuda/impl/cuda_cmake_macros.h"
      python3 "$check" "$build" --file engine/dist/process_group.cpp -DUSE_C10D_NCCL -I/usr/local/cuda/include \
        "-I$build/cuda-stub"
    fi
  ' torch2.sh "$step" "$jobs" "$build_dir" "$*" "${cmake_args[@]}"
  ;;
suite)
  need_root
  label=$1 skip=${2:-}
  # As many tests at once as there are jobs: each test has its own folders and its ranks their own ports
  # (rank 0 publishes the one it bound), and most of them keep one core busy.
  args=(--test-dir "$build_dir" -L "^$label\$" --output-on-failure --timeout 900 -j"$jobs")
  [ -z "$skip" ] || args+=(-LE "$skip")
  in_root ctest "${args[@]}"
  ;;
reference)
  need_root
  [ -x "$root$build_dir/bin/slipway-engine" ] || { echo "no engine at $root$build_dir (the build step failed)"; exit 1; }
  # The reference tokenizers are the tokenizer suite's fixture (the real tokenizers of tests/data/tokenizers,
  # tokenizers our engine trained and extended, with the HF library's ids; its python is a venv over the
  # root's python3, else the root's python3-tokenizers); made here when that suite has not run in this build.
  reference_dir=$build_dir/reference
  if [ ! -f "$root$reference_dir/extended/tokenizer.json" ]; then
    in_root bash /src/slipway/tests/reference/setup_fixture.sh "$build_dir/bin/slipway-engine" "$reference_dir" \
      /src/slipway/tests/data/tokenizer/corpus.jsonl
  fi
  in_root env OMP_NUM_THREADS="$jobs" python3 /src/slipway/tests/compat/hf_reference.py \
    --engine "$build_dir/bin/slipway-engine" --tokenizers "$reference_dir" --threads "$jobs"
  ;;
venv)
  need_root
  reference_venv
  ;;
pyref)
  need_root
  [ -x "$root$build_dir/bin/slipway-engine" ] || { echo "no engine at $root$build_dir (the build step failed)"; exit 1; }
  script=$1
  shift
  work=$build_dir/pyref/$(basename "$script" .py)
  rm -rf "${root:?}$work" && mkdir -p "$root$work"
  venv=$(reference_venv | tail -n 1)
  in_root env OMP_NUM_THREADS="$jobs" "$venv/bin/python" "/src/slipway/$script" \
    --engine "$build_dir/bin/slipway-engine" --work "$work" "$@"
  ;;
gpu)
  # tests/gpu/run.sh as on a GPU machine that has only a PyTorch: build dependencies from the vendor folder
  # (Debian 12's, filled on this host by vendor.sh), torch 2.6 through torch.utils.cmake_prefix_path. It
  # configures with them (all found?) and runs the `build` step's binaries (PREBUILT: one engine build per
  # root). With no GPU it runs its CPU-side parts and exits 77: that is this step's pass.
  need_root
  mkdir -p "$root$gpu_dir" && touch "$root$gpu_dir"
  prune_builds /build gpu
  bash "$source_dir/tests/gpu/vendor.sh" "$root$gpu_dir/vendor"
  status=0
  in_root "${ccache_env[@]}" CMAKE_CXX_COMPILER_LAUNCHER=ccache PYTHON=python3 JOBS="$jobs" \
    BUILD_DIR="$gpu_dir/build" RESULTS="$gpu_dir/results" VENDOR="$gpu_dir/vendor" PREBUILT="$build_dir" \
    bash /src/slipway/tests/gpu/run.sh || status=$?
  case $status in
  0) echo "tests/gpu/run.sh: every check passed (a GPU was there)" ;;
  77) echo "tests/gpu/run.sh: configured against LibTorch 2.6 and the vendor folder; CPU-side parts passed; no GPU" ;;
  *) echo "tests/gpu/run.sh failed (exit $status)"; exit 1 ;;
  esac
  ;;
dockerfile)
  need_root
  # The Dockerfile names its build folder (/src/build): one checkout's run at a time.
  exec 9>"$cache_dir/.dockerfile.lock"
  flock 9
  exec bash "$here/dockerfile_engine_stage.sh" "$1" "$root" "$source_dir"
  ;;
*)
  echo "torch2.sh: unknown step '$step'" >&2
  exit 2
  ;;
esac
