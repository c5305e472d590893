// The RunTracker's lifecycle on the real local Slurm (tests/cluster, real SSH, the real engine), without a
// window: a run cancelled while it trains ends cancelled with no failure alert (the engine answers
// SIGTERM with run_stop "aborted"), and a run whose engine fails ends failed with Slurm's word and one
// alert. Completed runs and the CLI on the same store are in one_store_cluster_test.cpp; faults Slurm
// cannot be made to produce on demand (dropped connections, refused scancel) in run_tracker_cluster_test.cpp.
#include <gtest/gtest.h>

#include <QFile>

#include "contract/hf_flags.h"
#include "core/run_state_display.h"
#include "history/run_history.h"
#include "runs/cluster_sessions.h"
#include "runs/run_tracker.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::wait_until;

class RunTrackerOnSlurm : public ::testing::Test {
protected:
    void SetUp() override {
        env_ = testing_util::use_local_cluster(QString::fromUtf8(test_paths::engine_bin()));
        if (env_.empty()) GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
        if (!QFile::exists(QString::fromUtf8(test_paths::engine_bin())))
            GTEST_SKIP() << "no slipway-engine built";
        Result<std::unique_ptr<RunHistory>> store =
            RunHistory::open((home_.path() + "/history.sqlite").toStdString());
        ASSERT_TRUE(store.ok()) << store.error();
        store_ = std::move(*store);
        sessions_.set_profiles(
            {testing_util::local_cluster_profile(env_, env_["SLIPWAY_REMOTE_DIR"] + "/tracker-lifecycle")});
        sessions_.set_store_path(QString::fromStdString(store_->path()));
        RunTracker::Options options;
        options.resource_root = QString::fromUtf8(test_paths::source_dir());
        options.engine_binary = QString::fromUtf8(test_paths::engine_bin());
        options.job_poll_ms = 1000;
        tracker_ = std::make_unique<RunTracker>(store_.get(), &follow_, &sessions_, options);
        QObject::connect(tracker_.get(), &RunTracker::alert,
                         [this](int, const RunAlert& a) { alerts_.push_back(a); });
    }
    void TearDown() override {
        tracker_.reset();
        qunsetenv("SLIPWAY_ENGINE");
        qunsetenv("SLIPWAY_KNOWN_HOSTS");
    }
    RunConfig demo(const std::vector<std::string>& flags) {
        RunConfig config = testing_util::demo_config();
        EXPECT_TRUE(apply_hf_flags(config, flags).ok());
        return config;
    }

    testing_util::IsolatedHome home_;
    std::map<QString, QString> env_;
    std::unique_ptr<RunHistory> store_;
    FollowService follow_;
    ClusterSessions sessions_;
    std::unique_ptr<RunTracker> tracker_;
    std::vector<RunAlert> alerts_;
};

TEST_F(RunTrackerOnSlurm, ARunCancelledWhileTrainingEndsCancelledWithoutAFailureAlert) {
    const Result<int> key = tracker_->submit_cluster(demo({"--max_steps", "100000"}), "local-slurm");
    ASSERT_TRUE(key.ok()) << key.error();
    // Training: Slurm says RUNNING and the log has points.
    ASSERT_TRUE(wait_until(
        [&] {
            const TrackedRun* r = tracker_->run(*key);
            return r->state == RunState::kRunning && r->metrics.points(Metric::kTrainLoss).size() >= 1;
        },
        300'000))
        << display_text(tracker_->run(*key)->state).toStdString();
    ASSERT_TRUE(tracker_->cancel(*key).ok());
    ASSERT_TRUE(wait_until([&] { return is_terminal(tracker_->run(*key)->state); }, 120'000));
    const TrackedRun* run = tracker_->run(*key);
    EXPECT_EQ(run->state, RunState::kCancelled) << run->state_detail;
    EXPECT_EQ(run->slurm_state, "CANCELLED");
    EXPECT_EQ(store_->run(run->store_id)->state, RunState::kCancelled);
    for (const RunAlert& a : alerts_)
        EXPECT_NE(a.kind, RunAlertKind::kFailed) << a.message;
}

TEST_F(RunTrackerOnSlurm, ARunWhoseEngineFailsEndsFailedWithOneAlert) {
    // An absolute path names a file on the cluster: this one is not there, so the engine stops at once.
    RunConfig config = demo({"--max_steps", "10", "--warmup_steps", "2"});
    config.data.train_file = "/nonexistent/slipway/train.jsonl";
    const Result<int> key = tracker_->submit_cluster(config, "local-slurm");
    ASSERT_TRUE(key.ok()) << key.error();
    ASSERT_TRUE(wait_until([&] { return is_terminal(tracker_->run(*key)->state); }, 300'000));
    const TrackedRun* run = tracker_->run(*key);
    EXPECT_EQ(run->state, RunState::kFailed) << run->state_detail;
    EXPECT_EQ(run->slurm_state, "FAILED") << run->state_detail;
    EXPECT_EQ(store_->run(run->store_id)->slurm_state, "FAILED");
    ASSERT_TRUE(wait_until([&] { return !alerts_.empty(); }, 10'000));
    wait_until([] { return false; }, 2000);  // the log's tail: no second alert
    EXPECT_EQ(alerts_.size(), 1u);
    EXPECT_EQ(alerts_.front().kind, RunAlertKind::kFailed);
}

}  // namespace
}  // namespace slipway::app
