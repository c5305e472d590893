// node_ranks.h: the node list of a run, grouped, described and carried in MLLOG.
#include "contract/node_ranks.h"

#include <algorithm>

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

std::vector<NodeStep> node_steps(const std::vector<NodeRanks>& nodes,
                                 const std::vector<std::optional<int64_t>>& rank_steps) {
    std::vector<NodeStep> steps;
    for (const NodeRanks& n : nodes) {
        NodeStep s{n.node, std::nullopt};
        bool known = !n.ranks.empty();
        for (const int64_t r : n.ranks) {
            const auto index = static_cast<size_t>(r);
            if (index >= rank_steps.size() || !rank_steps[index]) {
                known = false;
                break;
            }
            s.step = s.step ? std::min(*s.step, *rank_steps[index]) : *rank_steps[index];
        }
        if (!known) s.step.reset();
        steps.push_back(std::move(s));
    }
    return steps;
}

MllogJson node_steps_json(const std::vector<NodeStep>& steps) {
    MllogJson value = MllogJson::object();
    for (const NodeStep& s : steps)
        value[s.node] = s.step ? MllogJson(*s.step) : MllogJson(nullptr);
    return value;
}

std::optional<std::vector<NodeStep>> node_steps_from_json(const MllogJson& value) {
    if (!value.is_object()) return std::nullopt;
    std::vector<NodeStep> steps;
    for (const auto& [node, step] : value.items()) {
        if (node.empty()) return std::nullopt;
        if (step.is_null()) {
            steps.push_back({node, std::nullopt});
        } else if (step.is_number_integer() && step.get<int64_t>() >= 0) {
            steps.push_back({node, step.get<int64_t>()});
        } else {
            return std::nullopt;
        }
    }
    return steps;
}

std::optional<int64_t> leading_step(const std::vector<NodeStep>& steps) {
    std::optional<int64_t> lead;
    for (const NodeStep& s : steps)
        if (s.step) lead = lead ? std::max(*lead, *s.step) : *s.step;
    return lead;
}

std::string describe_step(const NodeStep& step, std::optional<int64_t> lead) {
    if (!step.step) return "no heartbeat";
    std::string text = "step " + std::to_string(*step.step);
    if (lead && *lead > *step.step) text += " (" + std::to_string(*lead - *step.step) + " behind)";
    return text;
}

std::string describe_node_steps(const std::vector<NodeStep>& steps) {
    const std::optional<int64_t> lead = leading_step(steps);
    std::string text;
    for (const NodeStep& s : steps)
        text += (text.empty() ? "" : ", ") + s.node + " " + describe_step(s, lead);
    return text;
}

}  // namespace slipway
