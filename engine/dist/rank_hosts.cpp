// rank_hosts.h: host names of the ranks, as the launch log and the failure messages show them.
#include "dist/rank_hosts.h"

#include <unistd.h>

#include <climits>

#include "contract/node_ranks.h"

namespace slipway::dist {
namespace {

bool knows(const std::vector<std::string>& hosts, int64_t rank) {
    return rank >= 0 && static_cast<size_t>(rank) < hosts.size() && !hosts[rank].empty();
}

}  // namespace

std::string this_host() {
    char name[HOST_NAME_MAX + 1] = {};
    if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "(unknown host)";
    return name;
}

std::string describe_rank_hosts(const std::vector<std::string>& hosts) {
    return describe_node_ranks(group_ranks_by_node(hosts));
}

std::string describe_ranks(const std::vector<int64_t>& ranks, const std::vector<std::string>& hosts) {
    std::string text = ranks.size() == 1 ? "rank " : "ranks ";
    bool every_known = !ranks.empty(), one_host = true;
    for (const int64_t r : ranks) {
        every_known = every_known && knows(hosts, r);
        one_host = one_host && every_known && hosts[r] == hosts[ranks.front()];
    }
    for (size_t i = 0; i < ranks.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(ranks[i]);
        if (every_known && !one_host) text += " on " + hosts[ranks[i]];
    }
    if (every_known && one_host) text += " on " + hosts[ranks.front()];
    return text;
}

std::string join_hosts(const std::vector<std::string>& hosts) {
    std::string joined;
    for (size_t i = 0; i < hosts.size(); ++i)
        joined += (i ? "\n" : "") + hosts[i];
    return joined;
}

std::vector<std::string> split_hosts(const std::string& joined) {
    std::vector<std::string> hosts;
    size_t start = 0;
    while (true) {
        const size_t end = joined.find('\n', start);
        hosts.push_back(joined.substr(start, end - start));
        if (end == std::string::npos) return hosts;
        start = end + 1;
    }
}

}  // namespace slipway::dist
