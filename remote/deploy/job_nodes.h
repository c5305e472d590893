// The Slurm state of each node a running job spans (sinfo -n <the job's node list>), shown beside the run's
// heartbeat steps: a node that stopped answering ("allocated*", "down*") or is being drained is seen while
// the run is live, and which node is behind, and why. Asked only for jobs on several nodes.
#pragma once

#include <string>
#include <vector>

#include "contract/node_ranks.h"
#include "contract/status.h"
#include "remote/slurm/slurm_client.h"

namespace slipway::remote {

struct NodeState {
    std::string node;
    std::string state;  // sinfo's word: idle, mixed, allocated, down*, draining, ...
    bool operator==(const NodeState& o) const { return node == o.node && state == o.state; }
    bool operator!=(const NodeState& o) const { return !(*this == o); }
};

// True when a job's node list (squeue's %R for a running job) names more than one node: "node[1-2]",
// "a,b". False for one node and for a pending reason ("(Resources)").
bool spans_several_nodes(const std::string& node_list);
// Each node once, in sinfo's order (sinfo -N prints a node once per partition it is in).
std::vector<NodeState> node_states(const std::vector<NodeRow>& rows);
// The states of the nodes in `node_list`, one sinfo.
[[nodiscard]] Result<std::vector<NodeState>> job_node_states(SlurmClient& slurm,
                                                             const std::string& node_list);
// "node1 allocated step 120, node2 down* step 118 (2 behind)": each node's state and, where the run's
// node_steps know it, its heartbeat step.
std::string describe_node_states(const std::vector<NodeState>& states, const std::vector<NodeStep>& steps);

}  // namespace slipway::remote
