#!/usr/bin/env bash
# Preemption on the local cluster (tests/cluster fixture: a real sshd and Slurm on
# 127.0.0.1), through `slipway submit` / `follow` / `fetch` of the demo with /slurm/auto_requeue:
# 1. requeued by `scontrol requeue` once its first checkpoint is written (Slurm stops the job with TERM as
#    a preemption does: the engine finishes its step and saves a checkpoint; Slurm puts the job back in the
#    queue), it resumes from its newest checkpoint and completes; its train_loss curve equals the same run's
#    uninterrupted one, bit for bit, and its one log (--open-mode=append) holds both segments.
# The time limit (Slurm's early USR1, the script's own requeue, max_restarts) is tested on two nodes, in
# two_node_cluster_test.sh section 6.
# Usage: requeue_cluster_test.sh SLIPWAY SLIPWAY_ENGINE SOURCE_DIR   (SLIPWAY_CLUSTER_ENV names cluster.env)
set -euo pipefail
slipway=$1 engine=$2 source_dir=$3
# shellcheck source=SCRIPTDIR/cluster_script_prelude.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_script_prelude.sh"

# shellcheck disable=SC2088  # the tilde is for slipway: the remote home, resolved over ssh
workdir="~/slipway-requeue-$suffix"
home_dir=$SLIPWAY_TEST_USER_HOME/slipway-requeue-$suffix
cleanup() {
  stop_nudgers
  rm -rf -- "$home_dir"
  if [ -n "${SLIPWAY_KEEP_WORK:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
"$slipway" clusters add local-test --host "$SLIPWAY_SSH_HOST" --port "$SLIPWAY_SSH_PORT" --user "$SLIPWAY_SSH_USER" \
  --identity "$SLIPWAY_SSH_KEY" --workdir "$workdir" --container none \
  --engine-source desktop >/dev/null

# The demo on 2 Gloo tasks, checkpoints every 4 steps, a loss point every step.
make_config() {  # OUT TIME SIGNAL_LEAD_S MAX_RESTARTS
  python3 - "$source_dir/resources/presets/demo-tiny.json" "$@" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["slurm"].update(time=sys.argv[3], signal_lead_s=int(sys.argv[4]), auto_requeue=True,
                       max_restarts=int(sys.argv[5]))
json.dump(config, open(sys.argv[2], "w"), indent=2)
PY
}
submit() {  # CONFIG NAME STEPS: prints "RUN_ID JOB_ID"
  "$slipway" submit "$1" --cluster local-test --engine "$engine" --name "$2" "${ssh_args[@]}" -- \
    --max_steps "$3" --save_steps 4 --logging_steps 1 --eval_steps 1000 >"$work/submit-$2.txt"
  tail -n 1 "$work/submit-$2.txt" | sed -n 's/^run_id=\([^ ]*\) job_id=\([0-9]*\)$/\1 \2/p'
}
follow_to_end() {  # RUN_ID NAME: follow's final state
  "$slipway" follow "$1" --interval 0.5 "${ssh_args[@]}" >"$work/follow-$2.txt" || true
  tail -n 1 "$work/follow-$2.txt"
}
losses() {  # MLLOG FILE: "step loss" per train_loss line, the last value of each step
  python3 - "$1" <<'PY'
import json, sys
loss = {}
for line in open(sys.argv[1], encoding="utf-8"):
    if ":::MLLOG" not in line:
        continue
    event = json.loads(line.split(":::MLLOG", 1)[1])
    if event["key"] == "train_loss":
        loss[event["metadata"]["step_num"]] = repr(event["value"])
for step in sorted(loss):
    print(step, loss[step])
PY
}
# 64 steps: the requeue must reach the job before it ends, and a step takes about 0.2 s here (24 steps left 20
# after checkpoint-4, 4 s, which a loaded slurmctld can take to act on a requeue).
steps=64
make_config "$work/requeue.json" 30 0 3
read -r straight_run straight_job < <(submit "$work/requeue.json" straight "$steps")
[ -n "$straight_job" ] || fail "submit of the uninterrupted run: $(cat "$work/submit-straight.txt")"
[ "$(follow_to_end "$straight_run" straight)" = "final_state=COMPLETED" ] || fail "the uninterrupted run did not complete"
"$slipway" fetch "$straight_run" --to "$work/straight" "${ssh_args[@]}" >/dev/null

# 1. scontrol requeue after the first checkpoint.
start=$(date +%s)
read -r run job < <(submit "$work/requeue.json" requeued "$steps")
[ -n "$job" ] || fail "submit of the requeued run: $(cat "$work/submit-requeued.txt")"
has_checkpoint() { [ -f "$home_dir/runs/$run/output/checkpoint-4/DONE" ]; }
wait_for 120 "the requeued run's checkpoint-4" has_checkpoint
scontrol requeue "$job" || fail "scontrol requeue $job refused: the run was in state $(job_field "$job" JobState)"
echo "requeued job $job at $(($(date +%s) - start)) s"
start_now_when_pending "$job"
[ "$(follow_to_end "$run" requeued)" = "final_state=COMPLETED" ] || fail "the requeued run did not complete: $(tail -n 3 "$work/follow-requeued.txt")"
echo "requeued run completed in $(($(date +%s) - start)) s"
[ "$(job_field "$job" Restarts)" = 1 ] || fail "Slurm counts $(job_field "$job" Restarts) restarts of job $job, not 1"
"$slipway" fetch "$run" --to "$work/requeued" "${ssh_args[@]}" >/dev/null
log=$work/requeued/slurm-$job.out
grep -q 'stopped (TERM: scancel, preemption or requeue)' "$log" || fail "the first segment was not stopped by TERM: $(cat "$log")"
grep -q 'stop requested (SIGTERM): saving a checkpoint at step' "$log" || fail "no checkpoint at the stop: $(cat "$log")"
grep -q "restart 1 of job $job: resuming from the newest checkpoint" "$log" || fail "the restart did not resume: $(cat "$log")"
grep -q 'resumed from .*checkpoint-[0-9]* at step' "$log" || fail "the engine did not resume: $(cat "$log")"
grep -q '"key": "resume".*"restart": 1' "$work/requeued/output/mllog.txt" || fail "mllog.txt does not mark the resume"
losses "$work/straight/output/mllog.txt" >"$work/straight.loss"
losses "$work/requeued/output/mllog.txt" >"$work/requeued.loss"
[ "$(wc -l <"$work/straight.loss")" -eq "$steps" ] || fail "the uninterrupted run logged $(wc -l <"$work/straight.loss") steps"
cmp -s "$work/straight.loss" "$work/requeued.loss" ||
  fail "the requeued curve differs from the uninterrupted one: $(diff "$work/straight.loss" "$work/requeued.loss" | head)"
# The follower saw one run: every step's train_loss, from both segments.
[ "$(sed -n 's/^train_loss [^ ]* step \([0-9]*\) .*/\1/p' "$work/follow-requeued.txt" | sort -un | wc -l)" -eq "$steps" ] ||
  fail "follow did not show every step of both segments: $(cat "$work/follow-requeued.txt")"
# tests/data/requeue/slurm-requeued.out, the app's fixture, is this log: SLIPWAY_REQUEUE_LOG_OUT=FILE keeps it.
if [ -n "${SLIPWAY_REQUEUE_LOG_OUT:-}" ]; then cp "$log" "$SLIPWAY_REQUEUE_LOG_OUT"; fi

echo "requeue_cluster_test: passed"
