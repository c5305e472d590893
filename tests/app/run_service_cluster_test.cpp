// The run service (service/slurm_executor.h) headless on the real local Slurm (tests/cluster, over real SSH
// with libssh): the demo submitted, its row pending with its job; asked with one squeue beside a second run;
// followed to COMPLETED with its train_loss lines and the row completed; its outputs fetched; the second run
// cancelled and its row cancelled. The same service is behind `slipway submit|status|follow|cancel|fetch`
// and the app's cluster worker (one_store_cluster_test.cpp drives those doors).
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "clusters/cluster_connect.h"
#include "contract/hf_flags.h"
#include "contract/mllog_keys.h"
#include "history/history_run_store.h"
#include "history/run_history.h"
#include "remote/ssh/libssh_session.h"
#include "service/slurm_executor.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

class RunServiceOnSlurm : public ::testing::Test {
protected:
    void SetUp() override {
        env_ = testing_util::use_local_cluster(QString::fromUtf8(test_paths::engine_bin()));
        if (env_.empty()) GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
        if (!fs::exists(test_paths::engine_bin())) GTEST_SKIP() << "no slipway-engine built";
        profile_ = testing_util::local_cluster_profile(env_, env_["SLIPWAY_REMOTE_DIR"] + "/run-service");
        Result<std::unique_ptr<RunHistory>> history =
            RunHistory::open(dir_.filePath("history.sqlite").toStdString());
        ASSERT_TRUE(history.ok()) << history.error();
        history_ = std::move(*history);
        store_ = std::make_unique<HistoryRunStore>(*history_);
        Result<std::unique_ptr<remote::Session>> session = remote::connect_ssh(connect_options(profile_));
        ASSERT_TRUE(session.ok()) << session.error();
        session_ = std::move(*session);
        executor_ = std::make_unique<SlurmExecutor>(*session_, profile_, *store_);
    }
    void TearDown() override {
        qunsetenv("SLIPWAY_ENGINE");
        qunsetenv("SLIPWAY_KNOWN_HOSTS");
    }
    static SubmitRequest demo(const std::vector<std::string>& flags) {
        SubmitRequest request;
        request.config = testing_util::demo_config();
        EXPECT_TRUE(apply_hf_flags(request.config, flags).ok());
        request.input_root = test_paths::source_dir();
        request.engine_binary = test_paths::engine_bin();
        return request;
    }

    QTemporaryDir dir_;
    std::map<QString, QString> env_;
    remote::ClusterProfile profile_;
    std::unique_ptr<RunHistory> history_;
    std::unique_ptr<HistoryRunStore> store_;
    std::unique_ptr<remote::Session> session_;
    std::unique_ptr<SlurmExecutor> executor_;
};

TEST_F(RunServiceOnSlurm, TheDemoIsSubmittedWatchedFollowedFetchedAndASecondRunCancelled) {
    const Result<Submission> sent =
        executor_->submit(demo({"--max_steps", "10", "--warmup_steps", "2", "--eval_steps", "5"}));
    ASSERT_TRUE(sent.ok()) << sent.error();
    EXPECT_EQ(store_->find(sent->run.run_id)->job_id, sent->run.job_id);
    // A second run that would train for long: it is cancelled below.
    const Result<Submission> long_run = executor_->submit(demo({"--max_steps", "100000"}));
    ASSERT_TRUE(long_run.ok()) << long_run.error();

    // The watcher: both jobs with one squeue, in the order asked.
    const std::vector<JobAnswer> answers = executor_->ask({sent->run.job_id, long_run->run.job_id});
    ASSERT_EQ(answers.size(), 2u);
    for (const JobAnswer& answer : answers) {
        ASSERT_TRUE(answer.info.ok()) << answer.info.error();
        EXPECT_TRUE(answer.info->state == "PENDING" || answer.info->state == "RUNNING") << answer.info->state;
    }
    EXPECT_EQ(answers[1].job_id, long_run->run.job_id);

    // Followed to its end: every train_loss in order, the row completed.
    Result<SlurmJob> job = executor_->job(*store_->find(sent->run.run_id));
    ASSERT_TRUE(job.ok()) << job.error();
    remote::RunFollowOptions options;
    options.interval = std::chrono::milliseconds(500);
    std::vector<double> steps;
    std::vector<std::string> states;
    remote::RunFollowCallbacks callbacks;
    callbacks.on_line = [&](MllogStreamItem&& item) {
        if (item.kind == MllogLineKind::kEvent && item.event.key == mllog_key::kTrainLoss)
            steps.push_back(item.event.step_num().value_or(-1));
    };
    callbacks.on_state = [&](const remote::JobInfo& info) { states.push_back(info.state); };
    const Result<remote::RunFollowOutcome> outcome = job->follow(options, callbacks);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_TRUE(outcome->success()) << outcome->job.state;
    ASSERT_FALSE(steps.empty());
    EXPECT_EQ(steps.back(), 10);
    EXPECT_TRUE(std::is_sorted(steps.begin(), steps.end()));
    EXPECT_EQ(states.back(), "COMPLETED");
    const Result<StoredRun> done = store_->find(sent->run.run_id);
    EXPECT_EQ(done->state, RunState::kCompleted);
    EXPECT_EQ(done->slurm_state, "COMPLETED");

    // Fetched: the config as it ran, the log and the trained adapter.
    const fs::path dest = fs::path(dir_.path().toStdString()) / "fetched";
    const Result<FetchedRun> fetched = job->fetch(dest.string(), /*checkpoints=*/false);
    ASSERT_TRUE(fetched.ok()) << fetched.error();
    EXPECT_TRUE(fs::exists(dest / "run.json"));
    EXPECT_TRUE(fs::exists(dest / ("slurm-" + sent->run.job_id + ".out")));
    bool has_output = false;
    for (const auto& entry : fs::recursive_directory_iterator(dest / "output"))
        has_output = has_output || entry.is_regular_file();
    EXPECT_TRUE(has_output);

    // The long run, cancelled: Slurm's CANCELLED, and its row says so.
    Result<SlurmJob> other = executor_->job(long_run->run);
    ASSERT_TRUE(other.ok());
    ASSERT_TRUE(other->cancel().ok());
    std::string state;
    for (int i = 0; i < 60 && state != "CANCELLED"; ++i) {
        const Result<remote::JobInfo> info = other->state();
        ASSERT_TRUE(info.ok()) << info.error();
        state = info->state;
        if (state != "CANCELLED") std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    EXPECT_EQ(state, "CANCELLED");
    EXPECT_EQ(store_->find(long_run->run.run_id)->state, RunState::kCancelled);
}

}  // namespace
}  // namespace slipway::app
