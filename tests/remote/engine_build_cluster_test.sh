#!/usr/bin/env bash
# The engine built on the cluster, in an environment that is not the host's (tests/cluster fixture: a real
# sshd and Slurm on 127.0.0.1). The image is Debian trixie's bare root (torch2_root.sh, TORCH2_FLAVOR=bare:
# python3-torch 2.6, a compiler, CMake; no -dev package of ICU, PCRE2, nlohmann or CLI11), run by a stand-in
# `apptainer` on the nodes' PATH (tests/cluster/apptainer_standin.sh: user namespace + chroot), put there by
# the profile's env_setup as a `module load apptainer` would. Checks:
# - `slipway engine build --log` queues a real build job that compiles the engine in the image, streams its
#   log, and prints engine=... fingerprint=... built; the second call says cached, and `engine list` shows the manifest;
# - `slipway submit` of a run in that image queues no build, runs the built engine from the mounted workdir,
#   and its train_loss equals the host engine's on the same weights and data within 1e-4 (another torch);
# - `slipway doctor` runs its checks in the same image with that engine, and they pass; so does a pipeline's
#   chain (a tokenizer, a training run, an eval);
# - a changed environment (one more env_setup line) builds again;
# - a bundle with a planted syntax error fails the submission with the compiler's message and the log's
#   path, and Slurm does not keep the run waiting.
# Usage: engine_build_cluster_test.sh SLIPWAY HOST_ENGINE SOURCE_DIR BUNDLE CACHE_DIR
set -euo pipefail
slipway=$1 host_engine=$2 source_dir=$3 bundle=$4 cache=$5
# shellcheck source=SCRIPTDIR/cluster_script_prelude.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_script_prelude.sh"

# shellcheck source=SCRIPTDIR/../cluster/standin_image.sh
source "$source_dir/tests/cluster/standin_image.sh"
workdir=$SLIPWAY_TEST_USER_HOME/slipway-engine-$suffix
cleanup() {
  stop_nudgers
  remove_standin_image
  rm -rf "$work" "$workdir"
}
trap cleanup EXIT
make_standin_image "$source_dir" "$cache" "$workdir"

"$slipway" clusters add appt --host "$SLIPWAY_SSH_HOST" --port "$SLIPWAY_SSH_PORT" --user "$SLIPWAY_SSH_USER" \
  --identity "$SLIPWAY_SSH_KEY" --workdir "$workdir" --container apptainer --engine-source build \
  --env-setup "export PATH=$standin:\$PATH" >/dev/null

# One set of weights for both engines, written by the host's; the run uploads it (a relative input).
cd "$work"
"$host_engine" init-model --config "$source_dir/resources/demo/model/config.json" --out model --seed 3 >/dev/null
cp "$source_dir/resources/demo/tokenizer.json" model/
head -n 400 "$source_dir/resources/demo/corpus.jsonl" >train.jsonl
cat >run.json <<JSON
{"name": "engine-build", "model": {"path": "model"}, "data": {"train_file": "train.jsonl", "block_size": 64,
 "validation_split_percentage": 0},
 "training": {"learning_rate": 0.003, "max_steps": 8, "per_device_train_batch_size": 4, "logging_steps": 1,
              "save_steps": 1000, "seed": 5},
 "adapter": {"method": "lora", "r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj", "down_proj"]},
 "slurm": {"gpus_per_node": 0, "ntasks_per_node": 1, "time": "00:20:00", "container_image": "$image"}}
JSON

# The build job, then the same engine found again.
started=$(date +%s)
"$slipway" engine build run.json --cluster appt --log "${ssh_args[@]}" >build.txt 2>build.err ||
  { cat build.err; fail "engine build failed"; }
grep -q "^build: build.sh: torch 2\.6" build.err || fail "engine build --log did not stream the build's log: $(cat build.err)"
echo "engine_build_cluster: built through Slurm in the image in $(($(date +%s) - started)) s"
cat build.txt
[[ $(cat build.txt) =~ ^engine=(/[^ ]+/engines/([0-9a-f]{16})/slipway-engine)\ fingerprint=([0-9a-f]{64})\ built$ ]] ||
  fail "engine build printed '$(cat build.txt)'"
engine=${BASH_REMATCH[1]}
fingerprint=${BASH_REMATCH[3]}
[ "${fingerprint:0:16}" = "${BASH_REMATCH[2]}" ] || fail "the engine's folder is not named by its fingerprint"
grep -q "building the engine in job [0-9]*" build.err || fail "engine build did not say which job builds"
"$slipway" engine build run.json --cluster appt "${ssh_args[@]}" >again.txt
[ "$(cat again.txt)" = "engine=$engine fingerprint=$fingerprint cached" ] || fail "the second build: $(cat again.txt)"
"$slipway" engine list --cluster appt "${ssh_args[@]}" | tee list.txt
grep -q '"torch": "2\.6' list.txt || fail "engine list shows no manifest with the image's torch"
grep -q "ATen only" list.txt || fail "the manifest does not say the engine has no CUDA kernels of its own"

# A run in the image: no build job, the built engine, and the host engine's losses.
"$slipway" submit run.json --cluster appt "${ssh_args[@]}" >submit.txt 2>submit.err ||
  { cat submit.err; fail "submit failed"; }
grep -q "engine $engine (built before)" submit.err || fail "submit did not reuse the engine: $(cat submit.err)"
[[ $(tail -n 1 submit.txt) =~ ^run_id=([A-Za-z0-9._-]+)\ job_id=([0-9]+)$ ]] || fail "submit printed $(tail -n 1 submit.txt)"
run_id=${BASH_REMATCH[1]}
"$slipway" follow "$run_id" --interval 0.5 "${ssh_args[@]}" >follow.txt || { cat follow.txt; fail "follow failed"; }
[ "$(tail -n 1 follow.txt)" = "final_state=COMPLETED" ] || fail "the run did not complete: $(tail -n 3 follow.txt)"
"$slipway" fetch "$run_id" --to fetched "${ssh_args[@]}" >/dev/null
grep -q "^engine=$engine\$" fetched/run.sbatch || fail "the run's script does not run the built engine"
grep -q "engine: libtorch 2\.6\.[0-9]*, without Slipway's CUDA kernels (built without nvcc/NCCL: ATen only)" \
  fetched/slurm-*.out || fail "the run's log does not say which torch and that it has no CUDA kernels of its own"
sed -i 's|"output_dir": *"[^"]*"|"output_dir": "host"|' fetched/run.json
sed -i 's|"cache_dir": *"[^"]*"|"cache_dir": "host-cache"|' fetched/run.json
"$host_engine" train --threads 1 fetched/run.json >/dev/null 2>host.err || { cat host.err; fail "the host run failed"; }
python3 "$source_dir/tests/compat/same_train_loss.py" host/mllog.txt fetched/output/mllog.txt --steps 8 \
  --tolerance 1e-4 --label "engine_build_cluster: train_loss of the engine built in the image against the host's" ||
  fail "the losses differ"

# The doctor in the same environment: the setup line, the image, and the engine built for it (no build, no
# upload of this computer's engine); its checks pass on the one node.
"$slipway" doctor appt --image "$image" --expect-busbw 0.1 --step-timeout 60 --no-save "${ssh_args[@]}" \
  >doctor.txt 2>doctor.err || { cat doctor.txt doctor.err; fail "the doctor in the image failed"; }
grep -q "engine $engine (built before)" doctor.err || fail "the doctor did not use the built engine: $(cat doctor.err)"
grep -qE '^localhost +ok ' doctor.txt || { cat doctor.txt; fail "no healthy row for localhost from the doctor in the image"; }

# A pipeline in the same environment: its CPU steps (a tokenizer, an eval of the trained model) run the built
# engine in the image after the setup line, as its training step does; no build is queued.
cat >chain.json <<JSON
{"schema": "slipway.pipeline/1", "name": "appt-chain", "steps": [
  {"name": "tok", "kind": "tokenizer", "mode": "train", "type": "bpe", "corpus": "resources/demo/corpus.jsonl",
   "vocab_size": 400, "out": "\${run}/tokenizer.json", "cpus": 1, "time": "00:10:00"},
  {"name": "base", "kind": "train", "config": {"schema": "slipway.run/1", "name": "appt-chain-base",
   "model": {"path": "resources/demo/model", "dtype": "float32", "init": "random"},
   "tokenizer": {"path": "resources/demo/tokenizer.json"},
   "data": {"train_file": "resources/demo/corpus.jsonl", "validation_split_percentage": 5, "block_size": 64},
   "training": {"learning_rate": 1e-3, "max_steps": 4, "per_device_train_batch_size": 4, "logging_steps": 2,
                "eval_steps": 4, "save_steps": 4, "output_dir": "\${run}/base", "overwrite_output_dir": true},
   "adapter": {"method": "full"},
   "slurm": {"gpus_per_node": 0, "ntasks_per_node": 1, "time": "00:10:00", "container_image": "$image"}}},
  {"name": "eval", "kind": "eval", "model": "\${steps.base.out}", "tasks": "resources/eval/demo-tasks.json",
   "limit": 4, "out": "\${run}/eval.json", "cpus": 1, "time": "00:10:00"}]}
JSON
"$slipway" submit chain.json --cluster appt "${ssh_args[@]}" >chain.txt 2>chain.err ||
  { cat chain.txt chain.err; fail "the pipeline was not submitted"; }
cat chain.txt
grep -q "engine $engine (built before)" chain.err || fail "the pipeline did not use the built engine: $(cat chain.err)"
chain_dir=$(sed -n 's/^pipeline appt-chain in //p' chain.txt)
chain_jobs=$(sed -n 's/^pipeline_id=.* jobs=//p' chain.txt)
if [ -z "$chain_dir" ] || [ -z "$chain_jobs" ]; then fail "no pipeline folder or jobs in: $(cat chain.txt)"; fi
for job in $chain_jobs; do
  wait_for 300 "pipeline job $job to end" bash -c "! squeue -h -j $job 2>/dev/null | grep -q ."
done
for file in tokenizer.json eval.json; do
  [ -s "$chain_dir/$file" ] || { tail -n 20 "$chain_dir"/steps/*/slurm-*.out; fail "the pipeline wrote no $file"; }
done
grep -q "^engine=$engine\$" "$chain_dir/steps/eval/step.sbatch" || fail "the eval step does not run the built engine"
echo "engine_build_cluster: the pipeline's three steps ran in the image"

# Another environment: one more setup line is another fingerprint, so another build.
"$slipway" clusters add appt2 --host "$SLIPWAY_SSH_HOST" --port "$SLIPWAY_SSH_PORT" --user "$SLIPWAY_SSH_USER" \
  --identity "$SLIPWAY_SSH_KEY" --workdir "$workdir" --container apptainer --engine-source build \
  --env-setup "export PATH=$standin:\$PATH" --env-setup "export OMP_NUM_THREADS=1" >/dev/null
started=$(date +%s)
"$slipway" engine build run.json --cluster appt2 "${ssh_args[@]}" >build2.txt 2>build2.err ||
  { cat build2.err; fail "the second environment's build failed"; }
echo "engine_build_cluster: the second environment built in $(($(date +%s) - started)) s"
if ! grep -q " built$" build2.txt || grep -q "fingerprint=$fingerprint" build2.txt; then
  fail "a changed environment did not build again: $(cat build2.txt)"
fi

# A broken bundle: the submission fails with the compiler's error and the build log's path.
mkdir broken
tar -xzf "$bundle" -C broken
name=$(ls broken)
printf 'this is not C++;\n' >>"broken/$name/engine/eval/metrics.cpp"
tar -czf broken.tar.gz -C broken "$name"
if SLIPWAY_ENGINE_BUNDLE=$work/broken.tar.gz "$slipway" submit run.json --cluster appt "${ssh_args[@]}" \
  >broken.txt 2>broken.err; then
  fail "a broken bundle's run was submitted"
fi
cat broken.err
grep -q "the engine's build (job [0-9]*, FAILED) failed: .*metrics.cpp:[0-9]*:[0-9]*: error:" broken.err ||
  fail "the failure does not show the compiler's error"
grep -q "build log: $workdir/engines/[0-9a-f]*/build-[0-9]*.out" broken.err || fail "the failure does not name the log"
broken_job=$(sed -n 's/.*job \([0-9]*\) will not run.*/\1/p' broken.err)
[ -n "$broken_job" ] || fail "the failure does not name the run's job"
wait_for 30 "the broken run's job to leave the queue" \
  bash -c "! squeue -h -j $broken_job -t PENDING,RUNNING 2>/dev/null | grep -q ."
echo "engine_build_cluster: passed"
