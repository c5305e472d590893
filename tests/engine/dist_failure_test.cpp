// DistContext::describe_failure with real contexts (TCPStore rendezvous, Gloo groups, heartbeats) for three
// ranks on threads of this process, with the failures staged deterministically: a rank that stops beating
// without a word (killed), a rank that gives up because of it and stops beating too (the cascade a later
// survivor sees), and a rank whose heartbeat beats while its training thread lags (a hang). A rank that
// fails on its own (report_failure) is named with its cause, not as lost; and which errors are collective
// failures at all (a real Gloo timeout is; a shape error, out of memory or a filesystem error are not).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <new>
#include <thread>

#include <torch/torch.h>

#include "dist/process_group.h"
#include "dist/rank_hosts.h"
#include "dist/rendezvous.h"

namespace {

using slipway::dist::DistContext;
using Point = DistContext::StepPoint;

std::vector<std::unique_ptr<DistContext>> connect_ranks(int world, int timeout_s = 20) {
    // Port 0: rank 0 binds a free one and publishes it, as under `launch`.
    const slipway::Result<std::string> secret = slipway::dist::new_rendezvous_secret();
    EXPECT_TRUE(secret.ok());
    slipway::DistributedConfig config;
    config.backend = "gloo";
    config.timeout_s = timeout_s;
    std::vector<std::future<slipway::Result<std::unique_ptr<DistContext>>>> pending;
    for (int rank = 0; rank < world; ++rank) {
        slipway::dist::DistEnv env;
        env.rank = env.local_rank = rank;
        env.world_size = env.local_world_size = world;
        env.master_port = 0;
        // One file per test: ctest runs tests at once, and a rank must not read another test's port.
        env.port_file = testing::TempDir() + "/describe_failure_port_" +
                        testing::UnitTest::GetInstance()->current_test_info()->name();
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
    // Every rank runs on this machine: the node of the lost rank is its host name.
    const std::string host = slipway::dist::this_host();
    EXPECT_EQ(ranks[0]->hosts(), std::vector<std::string>(3, host));
    EXPECT_NE(first.find("rank 1: the run lost rank 2 on " + host + " (no heartbeat"), std::string::npos)
        << first;
    ranks[1]->abandon();  // it gave up (its record is in the store) and exits
    const std::string later = ranks[0]->describe_failure("Timed out waiting", 7);
    EXPECT_NE(later.find("rank 0: the run lost rank 2 on " + host + " (no heartbeat"), std::string::npos)
        << later;
    EXPECT_NE(later.find("during step 7 (rank 1 on " + host + " already stopped because of it)"),
              std::string::npos)
        << later;
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
    EXPECT_NE(message.find("rank 0: the run lost rank 1 on " + slipway::dist::this_host() +
                           " during step 5: its heartbeat still beats"),
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

// Abandoned contexts are leaked on purpose (their groups may hold dead work).
void abandon_all(std::vector<std::unique_ptr<DistContext>>& ranks) {
    for (auto& r : ranks)
        r->abandon();
    for (auto& r : ranks)
        (void)r.release();
}

TEST(DescribeFailure, ARankThatFailedOnItsOwnIsNamedWithItsCauseNotAsLost) {
    auto ranks = connect_ranks(3);
    ASSERT_EQ(ranks.size(), 3u);
    ranks[2]->report_failure("rank 2 failed during step 3: out of memory (std::bad_alloc)");
    ranks[2]->abandon();  // it exits: no more heartbeat, as a killed rank
    // Rank 0 (the store's host) waits for the other survivors' records: rank 1 answers first.
    const std::string first = ranks[1]->describe_failure("Connection closed by peer", 3);
    EXPECT_EQ(first, "rank 1: stopping: rank 2 failed during step 3: out of memory (std::bad_alloc)");
    const auto start = std::chrono::steady_clock::now();
    const std::string later = ranks[0]->describe_failure("Connection closed by peer", 3);
    EXPECT_EQ(later, "rank 0: stopping: rank 2 failed during step 3: out of memory (std::bad_alloc)");
    // Well under the 8 s rank 0 waits for survivors it has not heard from (a loaded CI machine is slow).
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(6))
        << "rank 1's record was there";
    abandon_all(ranks);
}

// Rank 0 hosts the store: it leaves only once every other rank's heartbeat holds its record (so they still
// name it when the store is gone), which takes a beat or two, not the 5 s deadline.
TEST(DescribeFailure, RankZeroThatFailsWaitsUntilTheOthersKnowWhy) {
    auto ranks = connect_ranks(2);
    ASSERT_EQ(ranks.size(), 2u);
    const auto start = std::chrono::steady_clock::now();
    ranks[0]->report_failure("rank 0 failed during step 2: shapes cannot be multiplied");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(4500))
        << "rank 1's heartbeat saw the record before the 5 s deadline";
    EXPECT_EQ(ranks[1]->describe_failure("Connection closed by peer", 2),
              "rank 1: stopping: rank 0 failed during step 2: shapes cannot be multiplied");
    abandon_all(ranks);
}

// Rank 0 fails in work only it does (tokenizing, a checkpoint) while the others wait for it: they name its
// failure, not a lost master.
TEST(DescribeFailure, ARankWaitingForRankZeroNamesItsFailure) {
    auto ranks = connect_ranks(2, /*timeout_s=*/2);
    ASSERT_EQ(ranks.size(), 2u);
    auto waiting = std::async(std::launch::async, [&] {
        return ranks[1]->wait_for_main("preparing the token cache", slipway::Status::Ok());
    });
    ranks[0]->report_failure("rank 0 failed before the first step: out of memory (std::bad_alloc)");
    ranks[0]->abandon();  // stops beating, as when it exits
    const slipway::Status s = waiting.get();
    EXPECT_EQ(s.code(), slipway::StatusCode::kUnavailable);
    EXPECT_EQ(s.message(),
              "rank 1: stopping: rank 0 failed before the first step: out of memory (std::bad_alloc)");
    abandon_all(ranks);
}

TEST(CollectiveFailure, AGlooTimeoutIsOneAndARanksOwnErrorsAreNot) {
    auto ranks = connect_ranks(2, /*timeout_s=*/1);
    ASSERT_EQ(ranks.size(), 2u);
    std::vector<double> alone{1.0};
    try {
        ranks[0]->allreduce_sum(alone);  // rank 1 never joins
        ADD_FAILURE() << "an allreduce without its peer returned";
    } catch (const std::exception& e) {
        EXPECT_TRUE(slipway::dist::is_collective_failure(e)) << typeid(e).name() << ": " << e.what();
    }
    EXPECT_TRUE(slipway::dist::is_collective_failure(slipway::dist::CollectiveError("nccl: timed out")));
    try {
        (void)torch::matmul(torch::zeros({2, 3}), torch::zeros({2, 3}));
        ADD_FAILURE() << "mismatched shapes multiplied";
    } catch (const std::exception& e) {
        EXPECT_FALSE(slipway::dist::is_collective_failure(e)) << e.what();
    }
    EXPECT_FALSE(slipway::dist::is_collective_failure(std::bad_alloc()));
    try {
        (void)std::filesystem::file_size("/nonexistent/slipway");
    } catch (const std::exception& e) {
        EXPECT_FALSE(slipway::dist::is_collective_failure(e)) << e.what();
    }
    abandon_all(ranks);
}

}  // namespace
