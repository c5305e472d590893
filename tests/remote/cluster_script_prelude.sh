# shellcheck shell=bash
# Sourced by the cluster test scripts (e2e, doctor, requeue) after they read their arguments: the local
# cluster's cluster.env (tests/cluster/start_cluster.sh writes it), a private work folder ($work, named
# $suffix) with the app's config and data under it, the client's ssh flags ($ssh_args) and fail().
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
