# shellcheck shell=bash
# Sourced by start_cluster.sh and stop_cluster.sh for a cluster of several nodes on this one machine: each
# node is a slurmd in its own network, UTS and mount namespace (its own hostname, its own address, an
# /etc/hosts that names every node), joined by veth pairs to a bridge in the root namespace on a private
# subnet that exists only here. The namespaces have no name: they vanish with their last process, so a
# killed test leaves neither a namespace nor a mount behind; the bridge is removed by stop_cluster.sh, or
# by the next start on the same STATE_DIR.

# One subnet and set of interface names per STATE_DIR (interface names have at most 15 characters), so two
# clusters on one machine do not collide and a restart on the same folder finds its own leftovers.
nodes_tag() {
  echo $(($(printf '%s' "$1" | cksum | cut -d' ' -f1) % 200 + 20))
}
nodes_bridge() { echo "slw$(nodes_tag "$1")br"; }
nodes_subnet() { echo "10.213.$(nodes_tag "$1")"; }
nodes_address() { echo "$(nodes_subnet "$1").$((10 + $2))"; }  # STATE_DIR, node number (1-based)
nodes_host_veth() { echo "slw$(nodes_tag "$1")n$2"; }

# Why namespaces cannot be used here, or nothing. The probe makes a bridge and a namespace for real:
# unshare alone can succeed where creating links or mounting is still refused (a container's defaults).
nodes_unavailable() {
  local probe=slwprobe$$
  command -v unshare >/dev/null 2>&1 || { echo "unshare is not installed"; return; }
  command -v ip >/dev/null 2>&1 || { echo "ip (iproute2) is not installed"; return; }
  command -v nsenter >/dev/null 2>&1 || { echo "nsenter is not installed"; return; }
  ip link add "$probe" type bridge 2>/dev/null || { echo "creating a bridge is not permitted here (no CAP_NET_ADMIN)"; return; }
  ip link del "$probe"
  # shellcheck disable=SC2016 # the inner shell's
  unshare --net --uts --mount --propagation private sh -c 'hostname slwprobe && mount --bind /etc/hostname /etc/hostname' \
    2>/dev/null || { echo "unshare --net --uts --mount with a bind mount is not permitted here"; return; }
}

# The bridge in the root namespace; its address is the controller's on the nodes' subnet.
nodes_bridge_up() {
  local state=$1 bridge
  bridge=$(nodes_bridge "$state")
  ip link del "$bridge" 2>/dev/null || true
  ip link add "$bridge" type bridge
  ip addr add "$(nodes_subnet "$state").1/24" dev "$bridge"
  ip link set "$bridge" up
}

# Starts node NAME (number N) as a slurmd in new namespaces and records its PID in STATE_DIR/pids. It waits
# inside until its network is configured (the file net/NAME.ready), then becomes slurmd: tasks and steps
# inherit the node's hostname, address and /etc/hosts.
nodes_start_slurmd() {
  local state=$1 name=$2 number=$3 slurm_conf=$4 pid veth
  # shellcheck disable=SC2016 # the inner shell's
  setsid unshare --net --uts --mount --propagation private sh -c '
    hostname "$1" && mount --bind "$2" /etc/hosts || exit 1
    for _ in $(seq 400); do [ -e "$3" ] && break; sleep 0.05; done
    [ -e "$3" ] || { echo "the network of $1 was not configured" >&2; exit 1; }
    exec /usr/sbin/slurmd -D -N "$1" -f "$4"' sh "$name" "$state/net/hosts" "$state/net/$name.ready" "$slurm_conf" \
    </dev/null >"$state/slurm/slurmd-$name.out" 2>&1 &
  pid=$!
  echo "$pid" >"$state/pids/slurmd-$name.pid"
  # The child is in its own network namespace only once unshare ran: until then a link moved "into" it
  # would land in this one.
  local ours
  ours=$(readlink /proc/self/ns/net)
  for _ in $(seq 500); do
    [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" != "$ours" ] && break
    sleep 0.01
  done
  [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null || echo "$ours")" != "$ours" ] ||
    { echo "node_namespaces: $name did not get a network namespace; see $state/slurm/slurmd-$name.out" >&2 && return 1; }
  veth=$(nodes_host_veth "$state" "$number")
  ip link del "$veth" 2>/dev/null || true
  ip link add "$veth" type veth peer name eth0 netns "$pid"
  ip link set "$veth" master "$(nodes_bridge "$state")" up
  # shellcheck disable=SC2016 # the inner shell's
  nsenter -t "$pid" -n sh -c 'ip link set lo up && ip addr add "$1/24" dev eth0 && ip link set eth0 up &&
    ip route add default via "$2"' sh "$(nodes_address "$state" "$number")" "$(nodes_subnet "$state").1"
  touch "$state/net/$name.ready"
}

# Whether node NAME's slurmd runs (a zombie does not: some containers have no reaper for it).
nodes_slurmd_alive() {
  local pid stat_line
  pid=$(cat "$1/pids/slurmd-$2.pid" 2>/dev/null) || return 1
  stat_line=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat_line=${stat_line##*) }
  [ "${stat_line:0:1}" != "Z" ]
}

# What stop_cluster.sh removes once the node's processes are gone: the bridge (the veth pairs went with their
# namespaces; a host end left by a half-made start is removed too).
nodes_network_down() {
  local state=$1 number
  for number in 1 2 3 4; do
    ip link del "$(nodes_host_veth "$state" "$number")" 2>/dev/null || true
  done
  ip link del "$(nodes_bridge "$state")" 2>/dev/null || true
}
