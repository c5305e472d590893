#!/usr/bin/env bash
# Stops what start_cluster.sh started in STATE_DIR: the daemons whose PIDs it recorded (and the sshd's
# per-connection children), never anything found by name. Leaves STATE_DIR's files for post-mortems.
set -uo pipefail

state=${1:?usage: stop_cluster.sh STATE_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/node_namespaces.sh
. "$here/node_namespaces.sh"
[ -d "$state/pids" ] || exit 0

# Alive and still ours: a zombie (no reaper in some containers) counts as gone, and a recycled PID whose
# command line does not name this state folder is left alone.
alive() {
  [ -r "/proc/$1/stat" ] || return 1
  local stat_line
  stat_line=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat_line=${stat_line##*) }
  [ "${stat_line:0:1}" != "Z" ] || return 1
  tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$state"
}

# Jobs still running on this cluster would outlive slurmd: cancel them while slurmctld is up.
# Only while slurmctld runs: scancel would retry for its whole timeout against a stopped controller.
ctld_pid=$(cat "$state/pids/slurmctld.pid" 2>/dev/null)
if [ -n "$ctld_pid" ] && alive "$ctld_pid" && command -v scancel >/dev/null 2>&1; then
  user=$(sed -n 's/^SLIPWAY_SSH_USER=//p' "$state/cluster.env" 2>/dev/null)
  SLURM_CONF=$state/slurm/slurm.conf timeout 10 scancel --full --quiet --user "${user:-${SLIPWAY_TEST_USER:-slipway-test}}" \
    2>/dev/null || true
fi

# Reverse start order: slurmd (one, or one per namespaced node) before slurmctld before munged; sshd's
# connection children go with it.
slurmds=()
for file in "$state"/pids/slurmd*.pid; do
  [ -e "$file" ] && slurmds+=("$(basename "$file" .pid)")
done
for name in sshd-2fa sshd "${slurmds[@]}" slurmctld munged; do
  file=$state/pids/$name.pid
  [ -f "$file" ] || continue
  pid=$(cat "$file")
  case "$pid" in '' | *[!0-9]*) continue ;; esac
  if [ "${name%-2fa}" = "sshd" ] && alive "$pid"; then
    pkill -TERM -P "$pid" 2>/dev/null || true
  fi
  if alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      alive "$pid" || break
      sleep 0.1
    done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null
  fi
  rm -f "$file"
done
# The nodes' namespaces went with their last process; their bridge stays until removed.
[ -f "$state/net/hosts" ] && nodes_network_down "$state"
# The two-factor user's password was only for this cluster: lock it again ('*': no password works).
mfa_user=$(sed -n 's/^SLIPWAY_SSH_2FA_USER=//p' "$state/cluster.env" 2>/dev/null)
if [ -n "$mfa_user" ] && id "$mfa_user" >/dev/null 2>&1; then
  usermod -p '*' "$mfa_user" 2>/dev/null || true
fi
echo "stop_cluster: stopped the cluster in $state"
exit 0
