// Tests of the nodes of a running job (remote/deploy/job_nodes.h): which node lists name several nodes,
// one state per node from sinfo's rows per partition, the sinfo asked for a job's host list (quoted; a list
// with other characters refused before any command), and the states described beside heartbeat steps.
#include <gtest/gtest.h>

#include "remote/deploy/job_nodes.h"
#include "remote/ssh/fake_session.h"

namespace slipway::remote {
namespace {

TEST(JobNodes, SeveralNodesAreARangeOrAList) {
    EXPECT_TRUE(spans_several_nodes("node[1-2]"));
    EXPECT_TRUE(spans_several_nodes("node1,node2"));
    EXPECT_TRUE(spans_several_nodes("gpu[01,07]"));
    EXPECT_TRUE(spans_several_nodes("a[1-2],b3"));
    EXPECT_FALSE(spans_several_nodes("node1"));
    EXPECT_FALSE(spans_several_nodes("node[3]"));
    EXPECT_FALSE(spans_several_nodes("dgx-a100-07"));
    EXPECT_FALSE(spans_several_nodes("(Resources)"));
    EXPECT_FALSE(spans_several_nodes(""));
}

TEST(JobNodes, OneStatePerNodeFromSinfoOfTheJobsHostList) {
    FakeSession session;
    // node1 is in two partitions: sinfo -N prints it twice.
    session.queue_exec(
        ExecResult{"node1|debug*|allocated|2|1000|(null)\nnode1|long|allocated|2|1000|(null)\n"
                   "node2|debug*|allocated*|2|1000|(null)\n",
                   "", 0});
    SlurmClient slurm(session);
    Result<std::vector<NodeState>> states = job_node_states(slurm, "node[1-2]");
    ASSERT_TRUE(states.ok()) << states.error();
    ASSERT_EQ(states->size(), 2u);
    EXPECT_EQ((*states)[0], (NodeState{"node1", "allocated"}));
    EXPECT_EQ((*states)[1], (NodeState{"node2", "allocated*"}));
    ASSERT_EQ(session.commands().size(), 1u);
    EXPECT_EQ(session.commands()[0], "sinfo -h -N -o '%N|%P|%T|%c|%m|%G' -n 'node[1-2]'");
}

TEST(JobNodes, AHostListWithOtherCharactersNeverReachesACommandLine) {
    FakeSession session;
    SlurmClient slurm(session);
    for (const std::string bad : {"node1;reboot", "$(id)", "-p all", "node 1", "node1\nnode2", "'node1'"}) {
        Result<std::vector<NodeState>> states = job_node_states(slurm, bad);
        ASSERT_FALSE(states.ok()) << bad;
        EXPECT_NE(states.error().find("is not a Slurm host list"), std::string::npos) << states.error();
    }
    EXPECT_TRUE(session.commands().empty());
}

TEST(JobNodes, AFailedSinfoIsAnErrorWithItsStderr) {
    FakeSession session;
    session.queue_exec(ExecResult{"", "sinfo: error: Unable to contact slurm controller", 1});
    SlurmClient slurm(session);
    Result<std::vector<NodeState>> states = job_node_states(slurm, "node[1-2]");
    ASSERT_FALSE(states.ok());
    EXPECT_NE(states.error().find("Unable to contact slurm controller"), std::string::npos) << states.error();
}

TEST(JobNodes, EachNodesStateBesideItsHeartbeatStep) {
    const std::vector<NodeState> states = {{"node1", "allocated"}, {"node2", "down*"}, {"node3", "mixed"}};
    EXPECT_EQ(describe_node_states(states, {}), "node1 allocated, node2 down*, node3 mixed");
    const std::vector<NodeStep> steps = {{"node2", 118}, {"node1", 120}, {"node3", std::nullopt}};
    EXPECT_EQ(describe_node_states(states, steps),
              "node1 allocated step 120, node2 down* step 118 (2 behind), node3 mixed no heartbeat");
    // A node the heartbeats do not know (the store answered for some only) shows its state alone.
    EXPECT_EQ(describe_node_states(states, {{"node1", 7}}),
              "node1 allocated step 7, node2 down*, node3 mixed");
}

}  // namespace
}  // namespace slipway::remote
