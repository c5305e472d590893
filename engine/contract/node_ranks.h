// Which ranks of a run are on which node, as the MLLOG contract carries it: rank 0 logs "node_ranks" at the
// start (value {"node1": [0, 1], "node2": [2, 3]}), "node_steps" now and then while a run on several nodes
// trains (value {"node1": 120, "node2": 118}: the step each node's ranks last reported with their
// heartbeat, the least of its ranks'; so a user sees which node is behind) and, when the run lost ranks,
// run_stop's metadata "lost_nodes" names their nodes. The engine writes them; the app and the CLI show them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/mllog.h"

namespace slipway {

struct NodeRanks {
    std::string node;
    std::vector<int64_t> ranks;  // ascending
};

// hosts[r] is rank r's node: each node once, in the order its first rank appears.
std::vector<NodeRanks> group_ranks_by_node(const std::vector<std::string>& hosts);
// "0-1, 4" for ranks 0, 1 and 4 (ascending input).
std::string rank_ranges(const std::vector<int64_t>& ranks);
// "node1 (ranks 0-1), node2 (rank 2)".
std::string describe_node_ranks(const std::vector<NodeRanks>& nodes);

MllogJson node_ranks_json(const std::vector<NodeRanks>& nodes);
// nullopt when `value` is not an object of node name -> array of non-negative integers.
std::optional<std::vector<NodeRanks>> node_ranks_from_json(const MllogJson& value);

struct NodeStep {
    std::string node;
    std::optional<int64_t> step;  // nullopt: a rank of the node gave no heartbeat step
};
// Each node's step from its ranks' (rank_steps[r]: rank r's last heartbeat step, nullopt when unknown).
std::vector<NodeStep> node_steps(const std::vector<NodeRanks>& nodes,
                                 const std::vector<std::optional<int64_t>>& rank_steps);
MllogJson node_steps_json(const std::vector<NodeStep>& steps);
// nullopt when `value` is not an object of node name -> non-negative integer or null.
std::optional<std::vector<NodeStep>> node_steps_from_json(const MllogJson& value);
// "node1 step 120, node2 step 118 (2 behind), node3 no heartbeat".
std::string describe_node_steps(const std::vector<NodeStep>& steps);
// The greatest step of `steps` (nullopt: none known), and one node's part of the text above against it:
// "step 118 (2 behind)", "step 120", "no heartbeat".
std::optional<int64_t> leading_step(const std::vector<NodeStep>& steps);
std::string describe_step(const NodeStep& step, std::optional<int64_t> lead);

}  // namespace slipway
