// dist/rank_hosts: how the launch log shows the ranks spread over the nodes, how a failure names the node of
// a rank, and the host list's round trip through one store value.
#include <gtest/gtest.h>

#include "dist/rank_hosts.h"

namespace slipway::dist {
namespace {

using Hosts = std::vector<std::string>;

TEST(RankHosts, EachNodeOnceWithItsRanksAsRanges) {
    EXPECT_EQ(describe_rank_hosts({"node1", "node1", "node2", "node2"}),
              "node1 (ranks 0-1), node2 (ranks 2-3)");
    EXPECT_EQ(describe_rank_hosts({"a"}), "a (rank 0)");
    // Slurm's cyclic distribution: the ranks of a node are not contiguous.
    EXPECT_EQ(describe_rank_hosts({"n1", "n2", "n1", "n2", "n1"}), "n1 (ranks 0, 2, 4), n2 (ranks 1, 3)");
    EXPECT_EQ(describe_rank_hosts({"n1", "n1", "n1", "n2", "n1"}), "n1 (ranks 0-2, 4), n2 (rank 3)");
    EXPECT_EQ(describe_rank_hosts({}), "");
}

TEST(RankHosts, AFailureNamesTheNodeOfEachRank) {
    const Hosts hosts = {"node1", "node1", "node2", "node2"};
    EXPECT_EQ(describe_ranks({3}, hosts), "rank 3 on node2");
    EXPECT_EQ(describe_ranks({2, 3}, hosts), "ranks 2, 3 on node2");
    EXPECT_EQ(describe_ranks({1, 3}, hosts), "ranks 1 on node1, 3 on node2");
    // Before the exchange (or a rank past the list) the ranks alone.
    EXPECT_EQ(describe_ranks({3}, {}), "rank 3");
    EXPECT_EQ(describe_ranks({1, 7}, hosts), "ranks 1, 7");
}

TEST(RankHosts, TheListSurvivesOneStoreValue) {
    const Hosts hosts = {"node1", "gpu-07.cluster.example", "node1"};
    EXPECT_EQ(split_hosts(join_hosts(hosts)), hosts);
    EXPECT_EQ(split_hosts(join_hosts({"only"})), Hosts{"only"});
    EXPECT_FALSE(this_host().empty());
}

}  // namespace
}  // namespace slipway::dist
