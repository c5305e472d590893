// The nodes of a running job and their Slurm states (see job_nodes.h).
#include "remote/deploy/job_nodes.h"

#include <algorithm>

namespace slipway::remote {

bool spans_several_nodes(const std::string& node_list) {
    if (!check_host_list(node_list).ok()) return false;
    if (node_list.find(',') != std::string::npos) return true;
    // "node[3-4]": a range in brackets.
    const size_t open = node_list.find('[');
    return open != std::string::npos && node_list.find('-', open) != std::string::npos;
}

std::vector<NodeState> node_states(const std::vector<NodeRow>& rows) {
    std::vector<NodeState> states;
    for (const NodeRow& row : rows) {
        const bool seen = std::any_of(states.begin(), states.end(),
                                      [&row](const NodeState& s) { return s.node == row.node; });
        if (!seen) states.push_back({row.node, row.state});
    }
    return states;
}

Result<std::vector<NodeState>> job_node_states(SlurmClient& slurm, const std::string& node_list) {
    Result<std::vector<NodeRow>> rows = slurm.nodes(node_list);
    if (!rows.ok()) return rows.status();
    return node_states(*rows);
}

std::string describe_node_states(const std::vector<NodeState>& states, const std::vector<NodeStep>& steps) {
    const std::optional<int64_t> lead = leading_step(steps);
    std::string text;
    for (const NodeState& s : states) {
        text += (text.empty() ? "" : ", ") + s.node + " " + s.state;
        const auto step =
            std::find_if(steps.begin(), steps.end(), [&s](const NodeStep& n) { return n.node == s.node; });
        if (step != steps.end()) text += " " + describe_step(*step, lead);
    }
    return text;
}

}  // namespace slipway::remote
