// contract/node_ranks: the node list of a run (grouped from the ranks' hosts, described, and through the
// MLLOG "node_ranks" value and back); each node's heartbeat step ("node_steps"); values of another shape are
// refused, not half-read.
#include <gtest/gtest.h>

#include "contract/node_ranks.h"

namespace slipway {
namespace {

TEST(NodeRanks, GroupedInOrderOfTheirFirstRank) {
    const std::vector<NodeRanks> nodes = group_ranks_by_node({"node2", "node2", "node1", "node2"});
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[0].node, "node2");
    EXPECT_EQ(nodes[0].ranks, (std::vector<int64_t>{0, 1, 3}));
    EXPECT_EQ(nodes[1].ranks, std::vector<int64_t>{2});
    EXPECT_EQ(describe_node_ranks(nodes), "node2 (ranks 0-1, 3), node1 (rank 2)");
    EXPECT_EQ(rank_ranges({0, 1, 2, 5, 7, 8}), "0-2, 5, 7-8");
    EXPECT_EQ(rank_ranges({}), "");
    EXPECT_TRUE(group_ranks_by_node({}).empty());
}

TEST(NodeRanks, ThroughMllogAndBack) {
    const std::vector<NodeRanks> nodes = group_ranks_by_node({"node1", "node1", "node2", "node2"});
    const MllogJson value = node_ranks_json(nodes);
    EXPECT_EQ(value.dump(), R"({"node1":[0,1],"node2":[2,3]})");
    const std::optional<std::vector<NodeRanks>> back = node_ranks_from_json(value);
    ASSERT_TRUE(back.has_value());
    ASSERT_EQ(back->size(), 2u);
    EXPECT_EQ((*back)[1].node, "node2");
    EXPECT_EQ((*back)[1].ranks, (std::vector<int64_t>{2, 3}));
    for (const char* bad : {R"([0, 1])", R"({"node1": 3})", R"({"node1": [0, -1]})", R"({"node1": ["0"]})",
                            R"({"": [0]})", R"("node1")"})
        EXPECT_FALSE(node_ranks_from_json(MllogJson::parse(bad)).has_value()) << bad;
}

// A node's step is its slowest rank's; a rank without a step leaves its node unknown (null in MLLOG).
TEST(NodeSteps, TheLeastOfEachNodesRanksThroughMllogAndBack) {
    const std::vector<NodeRanks> nodes =
        group_ranks_by_node({"node1", "node1", "node2", "node2", "node3", "node3"});
    const std::vector<NodeStep> steps = node_steps(nodes, {120, 121, 118, 119, 120, std::nullopt});
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(steps[0].step, 120);
    EXPECT_EQ(steps[1].step, 118);
    EXPECT_FALSE(steps[2].step.has_value());
    EXPECT_EQ(describe_node_steps(steps), "node1 step 120, node2 step 118 (2 behind), node3 no heartbeat");
    const MllogJson value = node_steps_json(steps);
    EXPECT_EQ(value.dump(), R"({"node1":120,"node2":118,"node3":null})");
    const std::optional<std::vector<NodeStep>> back = node_steps_from_json(value);
    ASSERT_TRUE(back.has_value());
    ASSERT_EQ(back->size(), 3u);
    EXPECT_EQ((*back)[1].node, "node2");
    EXPECT_EQ((*back)[1].step, 118);
    EXPECT_FALSE((*back)[2].step.has_value());
    // Fewer steps than ranks (a rank not read): its node is unknown, not a crash.
    EXPECT_FALSE(node_steps(nodes, {1, 1}).at(1).step.has_value());
    for (const char* bad :
         {R"([120])", R"({"node1": -1})", R"({"node1": "120"})", R"({"": 1})", R"({"n": 1.5})"})
        EXPECT_FALSE(node_steps_from_json(MllogJson::parse(bad)).has_value()) << bad;
}

}  // namespace
}  // namespace slipway
