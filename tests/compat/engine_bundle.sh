#!/usr/bin/env bash
# The engine bundle (engine/bundle/) in an environment that is not the host's, as a cluster's build job meets
# it: Debian trixie's bare root (torch2_root.sh, TORCH2_FLAVOR=bare: python3-torch 2.6 with its C++ SDK, a
# compiler, CMake; no -dev package of nlohmann-json, CLI11, PCRE2 or ICU), no CUDA, and no network while it
# builds (unshare --net). Then the engine it built trains the demo and its losses equal the host engine's
# on the same weights and data within 1e-4 (another torch, so not bit for bit), and its manifest says it has
# no CUDA kernels of its own, and a bundle with a planted syntax error fails to build with the compiler's
# message in its log. The build's time is printed (ccache in the root makes a rebuild of a changed bundle
# quick).
# Usage: engine_bundle.sh BUNDLE.tar.gz HOST_ENGINE CACHE_DIR WORK_DIR
set -euo pipefail
bundle=$1 host_engine=$2 cache=$3 work=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$here/../.." && pwd)

root_out=$(TORCH2_SUITE=trixie TORCH2_FLAVOR=bare bash "$here/torch2_root.sh" "$cache") || exit $?
root=$(tail -n 1 <<<"$root_out")
# One fixed folder in the root, so that ccache's paths repeat from run to run.
inside=/tmp/slipway-bundle
rm -rf "$root$inside" "$work" && mkdir -p "$root$inside" "$work"
tar -xzf "$bundle" -C "$root$inside"
name=$(tar -tzf "$bundle" | sed -n '1s|/.*||p')  # reads it all: head would end tar with SIGPIPE

started=$(date +%s)
IN_ROOT_CUDA=0 unshare --net bash "$here/in_root.sh" "$root" "$source_dir" \
  bash -c "cd $inside/$name && JOBS=2 bash build.sh >$inside/build.log 2>&1" ||
  { echo "engine_bundle: build.sh failed; the end of its log:"; tail -n 30 "$root$inside/build.log"; exit 1; }
echo "engine_bundle: built offline in the bare root in $(($(date +%s) - started)) s"
manifest=$root$inside/$name/build/engine-manifest.json
cat "$manifest" && echo
python3 - "$manifest" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["torch"].startswith("2."), m["torch"]
assert m["cuda_kernels"] is False and "ATen only" in m["note"], m
PY

# A bundle with a planted syntax error: build.sh fails, and its log names the file and the compiler's error.
broken=/tmp/slipway-bundle-broken
rm -rf "$root$broken" && mkdir -p "$root$broken"
tar -xzf "$bundle" -C "$root$broken"
printf 'this is not C++;\n' >>"$root$broken/$name/engine/eval/metrics.cpp"
if IN_ROOT_CUDA=0 unshare --net bash "$here/in_root.sh" "$root" "$source_dir" \
  bash -c "cd $broken/$name && JOBS=2 bash build.sh >$broken/build.log 2>&1"; then
  echo "engine_bundle: a bundle with a syntax error built" >&2
  exit 1
fi
grep -m 1 "metrics.cpp:.*error:" "$root$broken/build.log" ||
  { echo "engine_bundle: the broken build's log does not name the error:" >&2; tail -n 20 "$root$broken/build.log"; exit 1; }
rm -rf "$root$broken"

# The same run by both engines, from one set of weights written by the host's.
"$host_engine" init-model --config "$source_dir/resources/demo/model/config.json" --out "$work/model" --seed 3 \
  >/dev/null
cp "$source_dir/resources/demo/tokenizer.json" "$work/model/"
head -n 400 "$source_dir/resources/demo/corpus.jsonl" >"$work/train.jsonl"
run_config() {  # OUT_DIR [PATH_PREFIX]: the run config with paths as the engine sees them
  cat <<JSON
{"name": "bundle-check", "model": {"path": "$2/model"}, "data": {"train_file": "$2/train.jsonl", "block_size": 64,
 "validation_split_percentage": 0, "cache_dir": "$2/$1-cache"},
 "training": {"learning_rate": 0.003, "max_steps": 8, "per_device_train_batch_size": 4, "output_dir": "$2/$1",
              "logging_steps": 1, "seed": 5},
 "adapter": {"method": "lora", "r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj", "down_proj"]},
 "slurm": {"gpus_per_node": 0}}
JSON
}
run_config host "$work" >"$work/host.json"
"$host_engine" train --threads 1 "$work/host.json" >/dev/null 2>"$work/host.err" || { cat "$work/host.err"; exit 1; }
mkdir -p "$root$inside/run"
cp -r "$work/model" "$work/train.jsonl" "$root$inside/run/"
run_config bundle "$inside/run" >"$root$inside/run/bundle.json"
IN_ROOT_CUDA=0 bash "$here/in_root.sh" "$root" "$source_dir" \
  "$inside/$name/build/bin/slipway-engine" train --threads 1 "$inside/run/bundle.json" >/dev/null \
  2>"$work/bundle.err" || { cat "$work/bundle.err"; exit 1; }
python3 "$here/same_train_loss.py" "$work/host/mllog.txt" "$root$inside/run/bundle/mllog.txt" --steps 8 \
  --tolerance 1e-4 --label "engine_bundle: train_loss of the bundle's engine against the host's"
