# shellcheck shell=bash
# Sourced by the cluster test scripts (e2e, doctor, requeue, two-node) after they read their arguments: the
# local cluster's cluster.env (tests/cluster/start_cluster.sh writes it), a private work folder ($work, named
# $suffix) with the app's config and data under it, the client's ssh flags ($ssh_args), fail(), and the
# helpers for Slurm jobs: wait_for, job_field, start_now_when_pending (stop_nudgers ends them).
: "${SLIPWAY_CLUSTER_ENV:?run through ctest: the local_cluster fixture writes cluster.env}"
set -a
# shellcheck disable=SC1090  # written by tests/cluster/start_cluster.sh
. "$SLIPWAY_CLUSTER_ENV"
set +a
work=$(mktemp -d)
# shellcheck disable=SC2034  # used by the sourcing script
suffix=$(basename "$work")
export XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data
# shellcheck disable=SC2034  # used by the sourcing script
ssh_args=(--batch --known-hosts "$SLIPWAY_SSH_KNOWN_HOSTS" --ssh-config none)
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
wait_for() {  # SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds, else fail naming DESCRIPTION
  local seconds=$1 what=$2
  shift 2
  for _ in $(seq $((seconds * 10))); do
    "$@" && return 0
    sleep 0.1
  done
  fail "waited $seconds s for $what"
}
job_field() {  # JOB_ID FIELD: a field of scontrol show job (empty once the job is gone)
  scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
# A requeued job waits for its begin time (Slurm holds it for about two minutes after a requeue, and sets it
# again once a failed run's cleanup ends); moved to now once the job has pended for 2 s, until it completed,
# was cancelled or timed out (a failed job may still be requeued), so each restart costs seconds, not
# minutes. Not at once: a job started in the second its old run's credential was revoked is killed as
# "non-startable" (Job credential revoked) and ends FAILED for good.
nudgers=()
start_now_when_pending() {  # JOB_ID
  local job=$1
  (
    pending=0
    for _ in $(seq 1500); do
      case "$(job_field "$job" JobState)" in
      PENDING)
        pending=$((pending + 1))
        if [ "$pending" -ge 10 ]; then scontrol update JobId="$job" StartTime=now >/dev/null 2>&1 || true; fi
        ;;
      COMPLETED | CANCELLED | TIMEOUT | "") exit 0 ;;
      *) pending=0 ;;
      esac
      sleep 0.2
    done
  ) &
  nudgers+=($!)
}
stop_nudgers() {
  local pid
  for pid in "${nudgers[@]}"; do kill "$pid" 2>/dev/null || true; done
}
