// DistContext::describe_failure with real contexts (TCPStore rendezvous, Gloo groups, heartbeats) for three
// ranks on threads of this process, with the failures staged deterministically: a rank that stops beating
// without a word (killed), a rank that gives up because of it and stops beating too (the cascade a later
// survivor sees), and a rank whose heartbeat beats while its training thread lags (a hang).
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "dist/process_group.h"
#include "dist/rendezvous.h"

namespace {

using slipway::dist::DistContext;
using Point = DistContext::StepPoint;

std::vector<std::unique_ptr<DistContext>> connect_ranks(int world) {
    // Port 0: rank 0 binds a free one and publishes it, as under `launch`.
    const slipway::Result<std::string> secret = slipway::dist::new_rendezvous_secret();
    EXPECT_TRUE(secret.ok());
    slipway::DistributedConfig config;
    config.backend = "gloo";
    config.timeout_s = 20;
    std::vector<std::future<slipway::Result<std::unique_ptr<DistContext>>>> pending;
    for (int rank = 0; rank < world; ++rank) {
        slipway::dist::DistEnv env;
        env.rank = env.local_rank = rank;
        env.world_size = env.local_world_size = world;
        env.master_port = 0;
        env.port_file = testing::TempDir() + "/describe_failure_port";
        env.secret = *secret;
        pending.push_back(
            std::async(std::launch::async, [env, config] { return DistContext::connect(env, config); }));
    }
    std::vector<std::unique_ptr<DistContext>> contexts;
    for (auto& p : pending) {
        slipway::Result<std::unique_ptr<DistContext>> made = p.get();
        EXPECT_TRUE(made.ok()) << made.error();
        if (made.ok()) contexts.push_back(std::move(*made));
    }
    return contexts;
}

TEST(DescribeFailure, TheRankLostFirstIsNamedNotTheOnesThatGaveUpAfterIt) {
    auto ranks = connect_ranks(3);
    ASSERT_EQ(ranks.size(), 3u);
    for (auto& r : ranks)
        r->mark_progress(7, Point::kSyncBackward);
    ranks[2]->abandon();  // killed: it stops beating and leaves no record
    const std::string first = ranks[1]->describe_failure("Connection reset by peer", 7);
    EXPECT_NE(first.find("rank 1: the run lost rank 2 (no heartbeat"), std::string::npos) << first;
    ranks[1]->abandon();  // it gave up (its record is in the store) and exits
    const std::string later = ranks[0]->describe_failure("Timed out waiting", 7);
    EXPECT_NE(later.find("rank 0: the run lost rank 2 (no heartbeat"), std::string::npos) << later;
    EXPECT_NE(later.find("during step 7 (rank 1 already stopped because of it)"), std::string::npos) << later;
    EXPECT_EQ(later.find("lost ranks"), std::string::npos) << later;
    ranks[0]->abandon();
    for (auto& r : ranks)
        (void)r.release();  // abandoned contexts are leaked on purpose (their groups may hold dead work)
}

TEST(DescribeFailure, ABeatingRankWhoseTrainingThreadLagsIsNamedAsHung) {
    auto ranks = connect_ranks(3);
    ASSERT_EQ(ranks.size(), 3u);
    ranks[0]->mark_progress(5, Point::kSyncBackward);  // waiting in step 5's gradient allreduce
    ranks[1]->mark_progress(5, Point::kStart);         // never got past the forward of step 5
    ranks[2]->mark_progress(5, Point::kSyncBackward);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // a couple of beats publish them
    const std::string message = ranks[0]->describe_failure("Timed out waiting 20000ms", 5);
    EXPECT_NE(message.find("rank 0: the run lost rank 1 during step 5: its heartbeat still beats"),
              std::string::npos)
        << message;
    // Peers that keep up are not blamed: the same check from a rank that is itself behind names no one.
    const std::string from_behind = ranks[1]->describe_failure("Timed out waiting 20000ms", 5);
    EXPECT_NE(from_behind.find("failed here while every other rank still answers"), std::string::npos)
        << from_behind;
    for (auto& r : ranks)
        r->abandon();
    for (auto& r : ranks)
        (void)r.release();
}

}  // namespace
