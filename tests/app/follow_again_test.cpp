// How a stored run is followed again (service/follow_again.h), rule by rule over rows as the store holds
// them. The caller's own engine (a LocalJob) is tested with a real one in local_executor_test.cpp.
#include <gtest/gtest.h>

#include "service/follow_again.h"

namespace slipway::app {
namespace {

StoredRun row(const std::string& cluster, RunState state, const std::string& job_id = {},
              const std::string& run_id = {}) {
    StoredRun r;
    r.id = 7;
    r.name = "demo";
    r.cluster = cluster;
    r.state = state;
    r.job_id = job_id;
    r.run_id = run_id;
    r.log_path = "/runs/demo/output/mllog.txt";
    return r;
}

FollowAgain plan(const StoredRun& r) {
    Result<FollowAgain> p = plan_follow_again(r, nullptr);
    EXPECT_TRUE(p.ok()) << p.error();
    return p.ok() ? *p : FollowAgain{};
}

TEST(FollowAgain, ARowWithoutALogIsRefusedByName) {
    StoredRun failed_submit = row("hpc", RunState::kFailed, {}, "demo-20261128-1");
    failed_submit.log_path.clear();
    const Result<FollowAgain> p = plan_follow_again(failed_submit, nullptr);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error(), "run 7 has no log to follow");
}

TEST(FollowAgain, AJobIsFollowedOnItsClusterAndSlurmIsAskedAgain) {
    const FollowAgain live = plan(row("hpc", RunState::kRunning, "12"));
    EXPECT_EQ(live.followed_as, RunKind::kClusterJob);
    EXPECT_TRUE(live.live);
    EXPECT_TRUE(live.cancellable);
    EXPECT_TRUE(live.ask_slurm);
    EXPECT_FALSE(live.state_from_store);

    // Ended: its log is read to its end once, nothing to cancel, Slurm's last word stands.
    const FollowAgain ended = plan(row("hpc", RunState::kFailed, "12"));
    EXPECT_EQ(ended.followed_as, RunKind::kClusterJob);
    EXPECT_FALSE(ended.live);
    EXPECT_FALSE(ended.cancellable);
    EXPECT_FALSE(ended.ask_slurm);

    // A submission with a run id and no job yet is a job too.
    EXPECT_EQ(plan(row("hpc", RunState::kSubmitting, {}, "demo-20261128-1")).followed_as,
              RunKind::kClusterJob);
}

TEST(FollowAgain, ALogOnAClusterReadsOnWhereItStopped) {
    const FollowAgain p = plan(row("hpc", RunState::kIncomplete));
    EXPECT_EQ(p.followed_as, RunKind::kClusterLog);
    EXPECT_TRUE(p.live);
    EXPECT_FALSE(p.cancellable);
    EXPECT_FALSE(p.ask_slurm);
}

TEST(FollowAgain, ALocalRunNotOursIsItsLogFileAndAnotherProcesssRowSaysItsState) {
    // An engine an earlier session started and that has ended (or was swept): only its log, nothing to stop.
    const FollowAgain ended = plan(row(kLocalCluster, RunState::kInterrupted, "4242"));
    EXPECT_EQ(ended.followed_as, RunKind::kLogFile);
    EXPECT_TRUE(ended.live);
    EXPECT_FALSE(ended.state_from_store);
    EXPECT_FALSE(ended.cancellable);

    // Still live in the store: another process runs it; its row says how it goes, its engine can be asked.
    const FollowAgain elsewhere = plan(row(kLocalCluster, RunState::kRunning, "4242"));
    EXPECT_EQ(elsewhere.followed_as, RunKind::kLogFile);
    EXPECT_TRUE(elsewhere.state_from_store);
    EXPECT_TRUE(elsewhere.cancellable);
    EXPECT_FALSE(elsewhere.ask_slurm);

    // A log file opened by hand is never another process's run, whatever its row says.
    const FollowAgain file = plan(row(kOpenedLogCluster, RunState::kFollowing));
    EXPECT_EQ(file.followed_as, RunKind::kLogFile);
    EXPECT_FALSE(file.state_from_store);
    EXPECT_FALSE(file.cancellable);
}

}  // namespace
}  // namespace slipway::app
