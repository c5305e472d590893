#!/usr/bin/env bash
# `slipway doctor` end to end on the local cluster (tests/cluster: a real sshd and Slurm on 127.0.0.1, one
# node `localhost` with no GPU): the real doctor job runs nvidia-smi's check (absent here: "not applicable"),
# bench-comm with Gloo within the node and across the allocation, and the rendezvous probe. Then faults are
# injected into that node through a wrapper engine that sets SLIPWAY_BENCH_COMM_FAULT (bench-comm's test hook):
# slow (reported slow, with its busbw against the expected figure), failing (failed, with the engine's
# message), hung (failed "timed out" within the step limit: the doctor never hangs), and a job cancelled at
# the doctor's deadline. `submit --exclude-bad` then renders the bad node into #SBATCH --exclude. The remote
# folder holds quotes, $() and spaces: nothing may execute. The cluster has one slurmd, so "across nodes" is
# one node's ranks here and a slow and a failing node are shown one after the other, not side by side.
# Usage: doctor_cluster_test.sh SLIPWAY SLIPWAY_ENGINE SOURCE_DIR   (SLIPWAY_CLUSTER_ENV names cluster.env)
set -euo pipefail
slipway=$1 engine=$2 source_dir=$3
# shellcheck source=SCRIPTDIR/cluster_script_prelude.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_script_prelude.sh"

marker=$work/pwned
remote=$SLIPWAY_REMOTE_DIR/doctor-$suffix
cleanup() {
  rm -rf "$work" "$remote"
  rm -rf -- "$SLIPWAY_TEST_USER_HOME/doctor-$suffix"*
}
trap cleanup EXIT
# shellcheck disable=SC2088  # the tilde is for slipway: the remote home, resolved over ssh
workdir="~/doctor-$suffix it's \$(touch $marker)"
"$slipway" clusters add local --host "$SLIPWAY_SSH_HOST" --port "$SLIPWAY_SSH_PORT" --user "$SLIPWAY_SSH_USER" \
  --identity "$SLIPWAY_SSH_KEY" --workdir "$workdir" --container none \
  --engine-source desktop >/dev/null

# Runs the doctor; its table in $work/out.txt, progress in $work/err.txt; prints the exit code and seconds.
doctor() {
  local start rc
  start=$(date +%s.%N)
  set +e
  "$slipway" doctor local "${ssh_args[@]}" "$@" >"$work/out.txt" 2>"$work/err.txt"
  rc=$?
  set -e
  cat "$work/out.txt" >&2
  echo "$rc $(echo "$(date +%s.%N) - $start" | bc)"
}

# --- healthy: the real engine deployed by the doctor.
read -r rc seconds < <(doctor --expect-busbw 0.3 --step-timeout 60)
echo "healthy: exit $rc in $seconds s"
[ "$rc" -eq 0 ] || fail "healthy doctor exited $rc: $(cat "$work/err.txt")"
# Reached by the probe, or proven by bench-comm joining the master's store when it finished first.
grep -qE '^localhost +ok +[0-9.]+ +0\.30 +not applicable: no nvidia-smi +ok localhost:[0-9]+ ([0-9]+ ms|\(bench-comm joined its store\)) +-$' \
  "$work/out.txt" ||
  fail "no healthy row for localhost"
grep -q '^exclude: (none)$' "$work/out.txt" || fail "a healthy node is excluded"
report=$XDG_DATA_HOME/slipway/doctor/local.json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["nodes"][0]["verdict"]=="ok", r; assert r["backend"]=="gloo"' \
  "$report" || fail "saved report"
"$slipway" doctor local "${ssh_args[@]}" --expect-busbw 0.3 --json --no-save 2>/dev/null |
  python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["exclude"]==[] and r["nodes"][0]["intra_busbw_gbps"]>0.3, r' ||
  fail "--json"

# --- faults, through a wrapper engine on the cluster (the fault hook is an environment variable).
mkdir -p "$remote"
cp "$engine" "$remote/slipway-engine"
for fault in slow=20 fail hang; do
  printf '#!/bin/bash\nexport SLIPWAY_BENCH_COMM_FAULT=%s\nexec %q "$@"\n' "$fault" "$remote/slipway-engine" \
    >"$remote/engine-${fault%%=*}"
done
chmod 755 "$remote" "$remote"/*

read -r rc seconds < <(doctor --expect-busbw 0.3 --step-timeout 40 --remote-engine "$remote/engine-slow")
echo "slow node: exit $rc in $seconds s"
[ "$rc" -eq 3 ] || fail "a slow node should exit 3, got $rc"
grep -qE '^localhost +slow .*intra-node busbw 0\.[0-9]+ GB/s < 50% of the expected 0\.30 GB/s \(given\)' "$work/out.txt" ||
  fail "the slow node is not reported slow against the expected figure"
grep -q '^exclude: localhost$' "$work/out.txt" || fail "the slow node is not excluded"

# submit --exclude-bad: the last report's bad node goes into the rendered script, and Slurm (left with no
# node) refuses the pre-flight.
set +e
"$slipway" submit "$source_dir/resources/presets/demo-tiny.json" --cluster local --engine "$engine" --exclude-bad \
  "${ssh_args[@]}" >"$work/submit.txt" 2>&1
submit_rc=$?
set -e
cat "$work/submit.txt" >&2
[ "$submit_rc" -ne 0 ] || fail "submit with the only node excluded was accepted"
grep -q 'excluding localhost' "$work/submit.txt" || fail "submit did not say what it excludes"
script=$(find "$SLIPWAY_TEST_USER_HOME/doctor-$suffix it's \$(touch $marker)/runs" -name run.sbatch | head -n 1)
grep -qx '#SBATCH --exclude=localhost' "$script" || fail "run.sbatch has no --exclude=localhost"

read -r rc seconds < <(doctor --expect-busbw 0.3 --step-timeout 60 --remote-engine "$remote/engine-fail")
echo "failing node: exit $rc in $seconds s"
[ "$rc" -eq 3 ] || fail "a failing node should exit 3, got $rc"
grep -qE '^localhost +failed .*intra-node bench-comm: exit 1: .*SLIPWAY_BENCH_COMM_FAULT=fail' "$work/out.txt" ||
  fail "the failing node's reason"

read -r rc seconds < <(doctor --expect-busbw 0.3 --step-timeout 8 --remote-engine "$remote/engine-hang")
echo "hung node (step limit 8 s): exit $rc in $seconds s"
[ "$rc" -eq 3 ] || fail "a hung node should exit 3, got $rc"
grep -qE '^localhost +failed .*intra-node bench-comm: timed out after 8 s' "$work/out.txt" || fail "the hung node's reason"
[ "$(echo "$seconds < 60" | bc)" -eq 1 ] || fail "the doctor took $seconds s on a hung node"

read -r rc seconds < <(doctor --expect-busbw 0.3 --step-timeout 120 --deadline 4 --remote-engine "$remote/engine-hang")
echo "deadline 4 s on a hung node: exit $rc in $seconds s"
[ "$rc" -eq 3 ] || fail "a job cancelled at the deadline should exit 3, got $rc"
grep -q 'cancelled' "$work/err.txt" || fail "the job was not cancelled at the deadline"
grep -q '^problem: the job did not finish within 4 s and was cancelled' "$work/out.txt" || fail "no deadline problem"
grep -qE '^localhost +failed ' "$work/out.txt" || fail "the node of a cancelled job is not failed"

[ ! -e "$marker" ] || fail "a value in the remote folder executed"
echo "PASS"
