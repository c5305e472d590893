// Which ranks of a run are on which node, as the MLLOG contract carries it: rank 0 logs "node_ranks" at the
// start (value {"node1": [0, 1], "node2": [2, 3]}) and, when the run lost ranks, run_stop's metadata
// "lost_nodes" names their nodes. The engine writes them; the app and the CLI show the node list.
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

}  // namespace slipway
