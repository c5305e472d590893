#!/usr/bin/env bash
# Builds slipway-engine from this engine bundle against the torch of the python3 on PATH, without network:
# what the build job runs on a cluster, inside the run's own image or environment (an NGC PyTorch image, a
# module or a venv). Needs that torch's C++ SDK (a pip or NGC torch carries it; Debian's is libtorch-dev), a
# C++ compiler, CMake >= 3.25 and make; nothing else (third_party/ carries nlohmann-json, CLI11 and PCRE2).
# The CUDA kernels and NCCL are built where nvcc and nccl.h are found, else the engine is CPU/ATen only, and
# engine-manifest.json says which.
# Usage: bash build.sh [BUILD_DIR]   (default: ./build; the engine is BUILD_DIR/bin/slipway-engine)
# Environment: PYTHON (default python3), JOBS (default: the CPUs), SLIPWAY_CUDA_ARCHITECTURES (CMake's list;
# default: what nvidia-smi reports here, else 80-real;90).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/build}
python=${PYTHON:-python3}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

read -r torch_version torch_prefix < <("$python" -c \
  'import torch, torch.utils; print(torch.__version__, torch.utils.cmake_prefix_path)')
# Where the image has ccache, the build goes through it (CMakeLists.txt: SLIPWAY_CCACHE, with the settings that
# let precompiled headers hit), so a changed bundle rebuilds only what changed.
args=(-DCMAKE_BUILD_TYPE=Release -DSLIPWAY_BUNDLED_DEPS=ON -DSLIPWAY_BUILD_APP=OFF -DSLIPWAY_BUILD_REMOTE=OFF
      -DSLIPWAY_BUILD_TESTS=OFF)
# A pip or NGC torch carries its CMake package; Debian's python3-torch does not (libtorch-dev puts it where
# CMake looks by default).
if [ -f "$torch_prefix/Torch/TorchConfig.cmake" ]; then
  args+=("-DCMAKE_PREFIX_PATH=$torch_prefix")
fi
# A pip torch brings NCCL as a wheel (nvidia-nccl-cu12): its header and library where CMake does not look, and
# the one torch itself loads, so the engine links that one rather than another NCCL of the image.
nccl_dir=$("$python" -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null || true)
if [ -n "$nccl_dir" ] && [ -f "$nccl_dir/include/nccl.h" ]; then
  for nccl_library in "$nccl_dir"/lib/libnccl.so*; do break; done
  if [ -f "$nccl_library" ]; then
    args+=("-DSLIPWAY_NCCL_INCLUDE_DIR=$nccl_dir/include" "-DSLIPWAY_NCCL_LIBRARY=$nccl_library")
  fi
fi
architectures=${SLIPWAY_CUDA_ARCHITECTURES:-}
if [ -z "$architectures" ] && command -v nvidia-smi >/dev/null 2>&1; then
  architectures=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
    tr -d '.' | sort -u | sed 's/$/-real/' | paste -sd';' || true)
fi
[ -n "$architectures" ] && args+=("-DCMAKE_CUDA_ARCHITECTURES=$architectures")

echo "build.sh: torch $torch_version ($("$python" -c 'import sys; print(sys.executable)')), $(c++ --version | head -n 1)"
cmake -S "$here" -B "$build" "${args[@]}"
cmake --build "$build" --target slipway-engine -j "$jobs"

with_cuda=$(sed -n 's/^SLIPWAY_WITH_CUDA:BOOL=//p' "$build/CMakeCache.txt")
"$python" - "$build" "$here" "$with_cuda" "$architectures" <<'PY'
import json, os, subprocess, sys
import torch
build, bundle, with_cuda, architectures = sys.argv[1:5]
compiler = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
nccl = None
if torch.cuda.is_available() or torch.version.cuda:
    try:
        nccl = ".".join(map(str, torch.cuda.nccl.version()))
    except Exception:
        pass
manifest = {
    "engine": os.path.join(build, "bin", "slipway-engine"),
    "bundle_sha256": open(os.path.join(bundle, "BUNDLE.sha256")).read().split()[0],
    "torch": torch.__version__,
    "cuda": torch.version.cuda,
    "nccl": nccl,
    "compiler": compiler,
    "cuda_kernels": with_cuda == "ON",
    "cuda_architectures": architectures or None,
    "note": None if with_cuda == "ON" else "built without nvcc/NCCL: no CUDA kernels of our own (ATen only)",
}
with open(os.path.join(build, "engine-manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1)
print(json.dumps(manifest))
PY
