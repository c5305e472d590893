#!/usr/bin/env bash
# End to end on the local cluster (tests/cluster fixture: a real sshd and Slurm on 127.0.0.1): `slipway
# submit` deploys demo-tiny (2 Gloo tasks, a few dozen steps) with the engine binary to a bare-metal
# profile, real Slurm runs it, `slipway follow` prints train_loss and eval_accuracy live and ends with
# COMPLETED, `slipway fetch` brings the outputs back, and a run name and remote folder full of quotes,
# $(), backticks, ';', spaces and Unicode go through the whole path without executing anything.
# A second run is cancelled: follow then ends with CANCELLED and a non-zero exit. Unknown host keys are
# refused with --batch and asked about on a terminal (script(1) gives the prompt a tty). A third run is
# followed across a dropped connection (its sshd process killed): every point arrives exactly once. The
# training image is built on the profile's host (`slipway image build`) with its output streamed back.
# Usage: e2e_cluster_test.sh SLIPWAY SLIPWAY_ENGINE SOURCE_DIR   (SLIPWAY_CLUSTER_ENV names cluster.env)
set -euo pipefail
slipway=$1 engine=$2 source_dir=$3
# shellcheck source=SCRIPTDIR/cluster_script_prelude.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_script_prelude.sh"

marker=$work/pwned
# The remote folder, under the test user's home, with characters a shell would act on.
# shellcheck disable=SC2088  # the tilde is for slipway: the remote home, resolved over ssh
workdir="~/slipway-e2e-$suffix it's \"q\" \$(touch $marker) \`touch $marker\`; Привет"
home_dir=$SLIPWAY_TEST_USER_HOME/slipway-e2e-$suffix" it's \"q\" \$(touch $marker) \`touch $marker\`; Привет"
cleanup() {
  rm -rf "$work"
  rm -rf -- "$home_dir"
}
trap cleanup EXIT

# The nodes are this machine: this computer's engine runs there (a new profile builds its engine otherwise).
"$slipway" clusters add local-test --host "$SLIPWAY_SSH_HOST" --port "$SLIPWAY_SSH_PORT" --user "$SLIPWAY_SSH_USER" \
  --identity "$SLIPWAY_SSH_KEY" --workdir "$workdir" --container none \
  --engine-source desktop
"$slipway" clusters test local-test "${ssh_args[@]}" | tee "$work/test.txt"
grep -q "partition $SLIPWAY_SLURM_PARTITION (default)" "$work/test.txt" || fail "clusters test shows no partition"
grep -q '^slurm[-a-z]* [0-9]' "$work/test.txt" || fail "clusters test shows no Slurm version"
grep -q '^runtimes: ' "$work/test.txt" || fail "clusters test shows no runtimes"
# The local cluster keeps no accounting: said, with sacct's own words.
grep -q '^accounting: off (.*): ended jobs are followed with squeue and scontrol$' "$work/test.txt" ||
  fail "clusters test does not say accounting is off"

# Host keys: an empty known_hosts is refused with --batch (naming the fingerprint), asked about on the
# terminal otherwise ("o": once, nothing saved; "y": saved), after which --batch connects.
fingerprint=$(ssh-keygen -lf "$SLIPWAY_SSH_HOST_PUBLIC_KEY" | awk '{print $2}')
known=$work/known_hosts
: >"$known"
if "$slipway" clusters test local-test --batch --known-hosts "$known" --ssh-config none 2>"$work/hk.txt"; then
  fail "--batch accepted an unknown host key"
fi
grep -qF "$fingerprint" "$work/hk.txt" || fail "the refusal does not show the fingerprint $fingerprint"
printf 'o\n' | script -qec "$(printf '%q ' "$slipway" clusters test local-test --known-hosts "$known" --ssh-config none)" \
  /dev/null >"$work/hk.txt"
grep -qF "key fingerprint is $fingerprint" "$work/hk.txt" || fail "the prompt does not show the fingerprint"
grep -q "partition $SLIPWAY_SLURM_PARTITION" "$work/hk.txt" || fail "accepting once did not connect"
[ ! -s "$known" ] || fail "accepting once saved the key"
printf 'y\n' | script -qec "$(printf '%q ' "$slipway" clusters test local-test --known-hosts "$known" --ssh-config none)" \
  /dev/null >"$work/hk.txt"
grep -q 'ssh-ed25519' "$known" || fail "accepting and saving did not write known_hosts"
"$slipway" clusters test local-test --batch --known-hosts "$known" --ssh-config none >/dev/null ||
  fail "the saved key was not trusted"

name="demo it's \"q\" \$(touch $marker) \`touch $marker\`; Привет"
start=$(date +%s)
"$slipway" submit "$source_dir/resources/presets/demo-tiny.json" --cluster local-test --engine "$engine" \
  --name "$name" "${ssh_args[@]}" -- --max_steps 30 --eval_steps 10 --logging_steps 5 --save_steps 1000 |
  tee "$work/submit.txt"
last=$(tail -n 1 "$work/submit.txt")
[[ $last =~ ^run_id=([A-Za-z0-9._-]+)\ job_id=([0-9]+)$ ]] || fail "submit's last line is '$last'"
run_id=${BASH_REMATCH[1]}
job_id=${BASH_REMATCH[2]}

"$slipway" follow "$run_id" --interval 0.5 "${ssh_args[@]}" | tee "$work/follow.txt"
follow_rc=${PIPESTATUS[0]}
echo "submit + follow: $(($(date +%s) - start)) s"
[ "$follow_rc" -eq 0 ] || fail "follow exited $follow_rc"
[ "$(tail -n 1 "$work/follow.txt")" = "final_state=COMPLETED" ] || fail "follow did not end with COMPLETED"
grep -q '^train_loss [0-9.]* step 5 samples 80$' "$work/follow.txt" || fail "no train_loss of step 5 (2 ranks x 8)"
[ "$(grep -c '^train_loss ' "$work/follow.txt")" -eq 6 ] || fail "expected 6 train_loss points"
[ "$(grep -c '^eval_accuracy ' "$work/follow.txt")" -eq 3 ] || fail "expected 3 eval_accuracy points"

"$slipway" status "$run_id" "${ssh_args[@]}" | tee "$work/status.txt"
awk -v id="$run_id" -v job="$job_id" '$1 == id && $2 == "local-test" && $3 == job && $4 == "COMPLETED" {found = 1}
  END {exit !found}' "$work/status.txt" || fail "status does not say COMPLETED"

# One run store: the history the app uses, private; no JSON run records any more.
[ "$(stat -c %a "$XDG_DATA_HOME/slipway/history.sqlite")" = 600 ] || fail "history.sqlite is not 0600"
[ ! -e "$XDG_DATA_HOME/slipway/runs" ] || fail "JSON run records were written to $XDG_DATA_HOME/slipway/runs"

"$slipway" fetch "$run_id" --to "$work/fetched" "${ssh_args[@]}"
[ -s "$work/fetched/slurm-$job_id.out" ] || fail "no slurm output fetched"
grep -q '"key": "run_stop".*"status": "success"' "$work/fetched/output/mllog.txt" || fail "no successful run_stop"
[ -s "$work/fetched/output/model.safetensors" ] || fail "no final model fetched"
/usr/bin/python3 - "$work/fetched/output/run.json" "$name" <<'PY' || fail "the run name did not arrive intact"
import json, sys
doc = json.load(open(sys.argv[1]))
config = doc.get("config", doc)
sys.exit(0 if config["name"] == sys.argv[2] else 1)
PY
grep -q 'rank 0 of 2' "$work/fetched/slurm-$job_id.out" || fail "training did not run on 2 ranks"

# Chat fine-tuning on Slurm: the demo conversations (messages, answers only, packed) with the demo model's
# chat template, uploaded with the model folder; the trained folder carries the template back.
"$slipway" submit "$source_dir/resources/presets/demo-chat.json" --cluster local-test --engine "$engine" \
  --name chat "${ssh_args[@]}" -- --max_steps 20 --eval_steps 10 --logging_steps 5 --save_steps 1000 |
  tee "$work/submit-chat.txt"
chat_run=$(tail -n 1 "$work/submit-chat.txt" | sed -n 's/^run_id=\([^ ]*\) .*/\1/p')
chat_job=$(tail -n 1 "$work/submit-chat.txt" | sed -n 's/.* job_id=\([0-9]*\)$/\1/p')
"$slipway" follow "$chat_run" --interval 0.5 "${ssh_args[@]}" >"$work/follow-chat.txt" || fail "follow of the chat run failed"
[ "$(tail -n 1 "$work/follow-chat.txt")" = "final_state=COMPLETED" ] || fail "the chat run did not complete"
[ "$(grep -c '^train_loss ' "$work/follow-chat.txt")" -eq 4 ] || fail "expected 4 train_loss points of the chat run"
"$slipway" fetch "$chat_run" --to "$work/fetched-chat" "${ssh_args[@]}"
grep -q 'conversations (messages, train_on assistant): [0-9]* kept, packed into [0-9]* blocks of 128 tokens' \
  "$work/fetched-chat/slurm-$chat_job.out" || fail "the chat run did not pack conversations: $(cat "$work/fetched-chat/slurm-$chat_job.out")"
[ -s "$work/fetched-chat/output/chat_template.jinja" ] || fail "the chat template did not come back with the model"
[ -s "$work/fetched-chat/output/tokenizer_config.json" ] || fail "tokenizer_config.json did not come back with the model"

# Cancel: a long run is cancelled while running; follow reports it and fails.
"$slipway" submit "$source_dir/resources/presets/demo-tiny.json" --cluster local-test --engine "$engine" \
  --name cancelled "${ssh_args[@]}" -- --max_steps 100000 | tee "$work/submit2.txt"
run2=$(tail -n 1 "$work/submit2.txt" | sed -n 's/^run_id=\([^ ]*\) .*/\1/p')
for _ in $(seq 100); do
  "$slipway" status "$run2" "${ssh_args[@]}" | grep -q RUNNING && break
  sleep 0.2
done
"$slipway" cancel "$run2" "${ssh_args[@]}"
set +e
"$slipway" follow "$run2" --interval 0.5 "${ssh_args[@]}" >"$work/follow2.txt"
follow2_rc=$?
set -e
[ "$follow2_rc" -ne 0 ] || fail "follow of a cancelled job exited 0"
[ "$(tail -n 1 "$work/follow2.txt")" = "final_state=CANCELLED" ] || fail "follow of the cancelled job: $(tail -n 1 "$work/follow2.txt")"

# A dropped connection while following: the sshd process serving follow's connection (found by its socket,
# so other tests' connections are untouched) is killed after the first train_loss; follow reconnects on a
# new connection and still prints every point exactly once.
"$slipway" submit "$source_dir/resources/presets/demo-tiny.json" --cluster local-test --engine "$engine" \
  --name reconnect "${ssh_args[@]}" -- --max_steps 40 --eval_steps 20 --logging_steps 5 --save_steps 1000 |
  tee "$work/submit3.txt"
run3=$(tail -n 1 "$work/submit3.txt" | sed -n 's/^run_id=\([^ ]*\) .*/\1/p')
"$slipway" follow "$run3" --interval 0.3 "${ssh_args[@]}" >"$work/follow3.txt" &
follow_pid=$!
for _ in $(seq 300); do
  grep -q '^train_loss' "$work/follow3.txt" && break
  sleep 0.2
done
client_port() {  # follow's local port to the sshd; empty while it has no connection
  ss -tnpH state established "( dport = :$SLIPWAY_SSH_PORT )" | awk -v pid="pid=$follow_pid," \
    'index($0, pid) {sub(/.*:/, "", $3); print $3; exit}'
}
old_port=$(client_port)
[ -n "$old_port" ] || fail "follow has no connection to the test sshd"
server_pid=$(ss -tnpH state established "( sport = :$SLIPWAY_SSH_PORT and dport = :$old_port )" |
  sed -n 's/.*pid=\([0-9]*\),.*/\1/p' | head -n 1)
[ -n "$server_pid" ] || fail "no sshd process serves follow's connection"
kill "$server_pid"
new_port=
for _ in $(seq 100); do
  new_port=$(client_port)
  [ -n "$new_port" ] && [ "$new_port" != "$old_port" ] && break
  sleep 0.1
done
set +e
wait "$follow_pid"
follow3_rc=$?
set -e
[ "$follow3_rc" -eq 0 ] || fail "follow across a dropped connection exited $follow3_rc"
if [ -z "$new_port" ] || [ "$new_port" = "$old_port" ]; then fail "follow did not reconnect"; fi
[ "$(grep -c '^train_loss ' "$work/follow3.txt")" -eq 8 ] || fail "expected 8 train_loss points across the drop"
[ "$(grep -c '^eval_accuracy ' "$work/follow3.txt")" -eq 2 ] || fail "expected 2 eval_accuracy points across the drop"
[ -z "$(sort "$work/follow3.txt" | uniq -d)" ] || fail "a line was delivered twice"
[ "$(tail -n 1 "$work/follow3.txt")" = "final_state=COMPLETED" ] || fail "follow across the drop did not end COMPLETED"

# The training image built on the profile's host: the rendered Dockerfile and the source tree go up, docker's
# output streams back. This host has no Docker daemon (or no docker), so the build must fail, explained.
if "$slipway" image build "$source_dir/resources/presets/saiga-lora.json" --cluster local-test --tag slipway/e2e:1 \
  "${ssh_args[@]}" >"$work/image.txt" 2>&1; then
  docker info >/dev/null 2>&1 || fail "image build succeeded without a Docker daemon"
else
  grep -q -e 'Cannot connect to the Docker daemon' -e 'docker: not found' "$work/image.txt" ||
    fail "image build failed without docker's reason: $(cat "$work/image.txt")"
  grep -q 'the build failed (exit [0-9]*); its log is ' "$work/image.txt" || fail "image build did not name its log"
fi
"$slipway" render dockerfile "$source_dir/resources/presets/saiga-lora.json" >"$work/expected.Dockerfile"
cmp -s "$work/expected.Dockerfile" "$home_dir"/images/slipway_e2e_1-*/Dockerfile || fail "the uploaded Dockerfile differs"
[ -f "$(echo "$home_dir"/images/slipway_e2e_1-*/context/CMakeLists.txt)" ] || fail "the source tree was not unpacked"

[ ! -e "$marker" ] || fail "a command in a name or path was executed"
echo "e2e_cluster_test: passed"
