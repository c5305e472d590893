#!/usr/bin/env bash
# On clusters the engine is built inside the NGC container against its torch 2.x; here LibTorch is 1.13.
# This checks that every engine source that uses LibTorch also compiles against LibTorch 2.x headers:
# Debian trixie's libtorch-dev and libgloo-dev packages are fetched from the Debian mirror and unpacked
# (not installed) into WORK_DIR, and each file is compiled with -fsyntax-only, the way the NGC build sees
# it (Gloo + our raw NCCL communicator; plus process_group.cpp with c10d's NCCL, as NGC's torch has it).
# Usage: torch2_syntax_check.sh SOURCE_DIR WORK_DIR. Exit 77 (skip) when the mirror cannot be reached.
set -uo pipefail
source_dir=$1
work_dir=$2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${TORCH2_SUITE:-trixie}
mkdir -p "$work_dir"
cd "$work_dir" || exit 1

if [ ! -f root/.unpacked ]; then
    if ! curl -fsS --max-time 120 "$mirror/dists/$suite/main/binary-amd64/Packages.xz" -o Packages.xz; then
        echo "SKIP: the Debian mirror ($mirror, $suite) cannot be reached"
        exit 77
    fi
    for package in libtorch-dev libgloo-dev; do
        file=$(xz -dc Packages.xz | awk -v p="$package" '$1 == "Package:" {hit = ($2 == p)} hit && $1 == "Filename:" {print $2; exit}')
        [ -n "$file" ] || { echo "no $package in $suite's Packages"; exit 1; }
        curl -fsS --max-time 300 "$mirror/$file" -o "$package.deb" || { echo "download failed: $mirror/$file"; exit 1; }
        dpkg-deb -x "$package.deb" root || exit 1
    done
    touch root/.unpacked
fi
include=$work_dir/root/usr/include
version=$(awk '/#define TORCH_VERSION_(MAJOR|MINOR|PATCH) / {v = v (v == "" ? "" : ".") $3} END {print v}' \
    "$include/torch/csrc/api/include/torch/version.h")
echo "LibTorch headers $version from $suite"

# The CPU-only package lacks CUDA's generated config header; NGC's torch has it.
mkdir -p stub/c10/cuda/impl
printf '#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n' > stub/c10/cuda/impl/cuda_cmake_macros.h

cuda_flags=()
if [ -f /usr/local/cuda/include/nccl.h ]; then cuda_flags=(-DSLIPWAY_WITH_NCCL=1 -I/usr/local/cuda/include); fi
common=(-std=c++17 -fsyntax-only -DUSE_C10D_GLOO -DUSE_DISTRIBUTED -I"$source_dir/engine" -I"$include"
        -I"$include/torch/csrc/api/include" -I"$work_dir/stub")

mapfile -t files < <(cd "$source_dir" && grep -rlE '#include <(torch|c10|ATen)/' engine tests/engine --include='*.cpp' | sort)
rm -rf results && mkdir results
check() {  # index, file, extra flags...: writes results/<index>.{ok,fail}
    local index=$1 file=$2
    shift 2
    if out=$(c++ "${common[@]}" "$@" "$source_dir/$file" 2>&1); then
        echo "ok    $file $*" > "results/$index.ok"
    else
        { echo "FAIL  $file $*"; echo "$out" | grep -E 'error' | head -20; } > "results/$index.fail"
    fi
}
jobs_max=${TORCH2_CHECK_JOBS:-2}
index=0
for file in "${files[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    check "$index" "$file" "${cuda_flags[@]}" &
    index=$((index + 1))
done
if [ ${#cuda_flags[@]} -gt 0 ]; then
    check "$index" engine/dist/process_group.cpp -DUSE_C10D_NCCL -I/usr/local/cuda/include &
    index=$((index + 1))
fi
wait
cat results/*
failures=$(find results -name '*.fail' | wc -l)
checked=$(find results -name '*.ok' -o -name '*.fail' | wc -l)
[ "$checked" -eq "$index" ] || { echo "only $checked of $index compiles reported"; exit 1; }
echo "$index compiles of ${#files[@]} files against LibTorch $version headers: $failures failed"
[ "$failures" -eq 0 ]
