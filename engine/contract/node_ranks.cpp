// node_ranks.h: the node list of a run, grouped, described and carried in MLLOG.
#include "contract/node_ranks.h"

namespace slipway {

std::vector<NodeRanks> group_ranks_by_node(const std::vector<std::string>& hosts) {
    std::vector<NodeRanks> nodes;
    for (size_t r = 0; r < hosts.size(); ++r) {
        auto it = nodes.begin();
        while (it != nodes.end() && it->node != hosts[r])
            ++it;
        if (it == nodes.end()) it = nodes.insert(nodes.end(), NodeRanks{hosts[r], {}});
        it->ranks.push_back(static_cast<int64_t>(r));
    }
    return nodes;
}

std::string rank_ranges(const std::vector<int64_t>& ranks) {
    std::string text;
    for (size_t i = 0; i < ranks.size();) {
        size_t end = i;
        while (end + 1 < ranks.size() && ranks[end + 1] == ranks[end] + 1)
            ++end;
        text += (text.empty() ? "" : ", ") + std::to_string(ranks[i]);
        if (end > i) text += "-" + std::to_string(ranks[end]);
        i = end + 1;
    }
    return text;
}

std::string describe_node_ranks(const std::vector<NodeRanks>& nodes) {
    std::string text;
    for (const NodeRanks& n : nodes)
        text += (text.empty() ? "" : ", ") + n.node + " (rank" + (n.ranks.size() > 1 ? "s " : " ") +
                rank_ranges(n.ranks) + ")";
    return text;
}

MllogJson node_ranks_json(const std::vector<NodeRanks>& nodes) {
    MllogJson value = MllogJson::object();
    for (const NodeRanks& n : nodes)
        value[n.node] = n.ranks;
    return value;
}

std::optional<std::vector<NodeRanks>> node_ranks_from_json(const MllogJson& value) {
    if (!value.is_object()) return std::nullopt;
    std::vector<NodeRanks> nodes;
    for (const auto& [node, ranks] : value.items()) {
        if (node.empty() || !ranks.is_array()) return std::nullopt;
        NodeRanks n{node, {}};
        for (const MllogJson& r : ranks) {
            if (!r.is_number_integer() || r.get<int64_t>() < 0) return std::nullopt;
            n.ranks.push_back(r.get<int64_t>());
        }
        nodes.push_back(std::move(n));
    }
    return nodes;
}

}  // namespace slipway
