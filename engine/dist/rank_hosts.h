// Which node each rank of a run is on (no torch): every rank publishes its host name at the rendezvous, so
// the launch log shows how the ranks spread over the nodes and a failure names the node of a lost rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace slipway::dist {

// This machine's host name (the node's, under Slurm).
std::string this_host();

// hosts[r] is rank r's node. "node1 (ranks 0-1), node2 (ranks 2-3)": each node once, in the order its first
// rank appears, with its ranks as ranges.
std::string describe_rank_hosts(const std::vector<std::string>& hosts);

// "rank 3 on node2", "ranks 2, 3 on node2", "ranks 1 on node1, 3 on node2"; without hosts (or a rank past
// them) just "rank 3" / "ranks 2, 3".
std::string describe_ranks(const std::vector<int64_t>& ranks, const std::vector<std::string>& hosts);

// The list as one store value and back (host names hold no newline).
std::string join_hosts(const std::vector<std::string>& hosts);
std::vector<std::string> split_hosts(const std::string& joined);

}  // namespace slipway::dist
