// Headless tests of the RunTracker without a window: runs on This computer (a stand-in engine that
// completes, fails or waits to be cancelled), log files read once or followed, the startup sweep, and
// release. States, store rows and alerts are checked together: one place changes them.
#include "runs/run_tracker.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <signal.h>

#include "history/history_writer.h"
#include "history/run_history.h"
#include "real_store_test.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::wait_until;

class RunTrackerTest : public RealStoreTest {
protected:
    void SetUp() override {
        RealStoreTest::SetUp();
        if (HasFatalFailure()) return;
        RunTracker::Options options;
        options.resource_root = QString::fromUtf8(test_paths::source_dir());
        options.local_runs_dir = dir_.filePath("runs");
        options.engine_binary = testing_util::fake_engine();
        tracker_ = std::make_unique<RunTracker>(history_.get(), &follow_, nullptr, options);
        QObject::connect(tracker_.get(), &RunTracker::alert,
                         [this](int key, const RunAlert& a) { alerts_.emplace_back(key, a); });
    }
    void TearDown() override { qunsetenv("FAKE_ENGINE_MODE"); }

    // Submits the demo with the stand-in engine in `mode` and waits for the process to end.
    int run_local(const char* mode) {
        qputenv("FAKE_ENGINE_MODE", mode);
        int finished = 0;
        auto c = QObject::connect(tracker_.get(), &RunTracker::local_run_finished,
                                  [&](int key, int) { finished = key; });
        const Result<int> key = tracker_->submit_local(testing_util::demo_config());
        EXPECT_TRUE(key.ok()) << key.error();
        if (!key.ok()) return 0;
        if (std::string(mode) == "hang") {
            // Started, and past its first lines (its SIGTERM handler is set by then).
            EXPECT_TRUE(wait_until(
                [&] {
                    return tracker_->run(*key)->cancellable &&
                           tracker_->run(*key)->metrics.total_points() > 0;
                },
                15000));
            EXPECT_TRUE(tracker_->cancel(*key).ok());
        }
        EXPECT_TRUE(wait_until([&] { return finished == *key; }, 15000));
        QObject::disconnect(c);
        // The engine's last lines are read after it exits.
        EXPECT_TRUE(wait_until([&] { return tracker_->run(*key)->follow_id == 0; }));
        return *key;
    }
    int alerts_for(int key, RunAlertKind kind) const {
        int n = 0;
        for (const auto& [k, a] : alerts_)
            n += k == key && a.kind == kind ? 1 : 0;
        return n;
    }

    FollowService follow_{20};
    std::unique_ptr<RunTracker> tracker_;
    std::vector<std::pair<int, RunAlert>> alerts_;
};

TEST_F(RunTrackerTest, ALocalRunThatCompletesIsStoredWithItsPointsAndOneAlert) {
    const int key = run_local("complete");
    const TrackedRun* run = tracker_->run(key);
    EXPECT_EQ(run->state, RunState::kCompleted);
    EXPECT_EQ(run->metrics.points(Metric::kTrainLoss).size(), 2u);
    EXPECT_FALSE(run->cancellable);
    EXPECT_EQ(tracker_->local_runs_active(), 0);
    EXPECT_EQ(alerts_for(key, RunAlertKind::kFinished), 1);  // from run_stop; the exit adds none
    EXPECT_EQ(alerts_.size(), 1u);
    const StoredRun stored = *history_->run(run->store_id);
    EXPECT_EQ(stored.state, RunState::kCompleted);
    EXPECT_EQ(stored.cluster, kLocalCluster);
    EXPECT_FALSE(stored.job_id.empty());  // the engine's pid
    EXPECT_NE(stored.finished_ms, 0);
    ASSERT_TRUE(history_->writer().flush().ok());
    EXPECT_EQ(*history_->point_count(run->store_id), 2);
}

TEST_F(RunTrackerTest, ALocalRunThatFailsSaysItsExitCodeOnce) {
    const int key = run_local("fail");
    const TrackedRun* run = tracker_->run(key);
    EXPECT_EQ(run->state, RunState::kFailed);
    // The engine's last words (its engine.log) with its exit: the run says why without opening a file.
    EXPECT_EQ(run->state_detail, "exit code 3: fake engine: failing on purpose");
    EXPECT_EQ(alerts_for(key, RunAlertKind::kFailed), 1);
    EXPECT_EQ(alerts_.size(), 1u);
    for (const auto& [k, a] : alerts_)
        EXPECT_EQ(a.message, "the engine ended with exit code 3: fake engine: failing on purpose");
    const StoredRun stored = *history_->run(run->store_id);
    EXPECT_EQ(stored.state, RunState::kFailed);
    EXPECT_EQ(stored.state_detail, run->state_detail);
}

TEST_F(RunTrackerTest, AnEngineThatCannotStartIsRefusedAndStoredFailed) {
    const QString broken = dir_.filePath("broken-engine");
    ASSERT_TRUE(testing_util::write_script(broken, "#!/nonexistent/interpreter\n"));
    RunTracker::Options options;
    options.resource_root = QString::fromUtf8(test_paths::source_dir());
    options.local_runs_dir = dir_.filePath("runs");
    options.engine_binary = broken;
    RunTracker tracker(history_.get(), &follow_, nullptr, options);
    int store_changes = 0;
    QObject::connect(&tracker, &RunTracker::store_changed, [&] { ++store_changes; });
    const Result<int> key = tracker.submit_local(testing_util::demo_config());
    ASSERT_FALSE(key.ok());
    EXPECT_EQ(key.error(), "cannot start " + broken.toStdString() + ": No such file or directory");
    EXPECT_TRUE(tracker.keys().empty());
    EXPECT_EQ(store_changes, 1);
    const Result<std::vector<StoredRun>> rows = history_->runs();
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ(rows->front().state, RunState::kFailed);
    EXPECT_EQ(rows->front().state_detail, key.error());
}

TEST_F(RunTrackerTest, ClosingTheTrackerStopsItsEnginesAndTheirRowsSaySo) {
    qputenv("FAKE_ENGINE_MODE", "hang");
    const Result<int> key = tracker_->submit_local(testing_util::demo_config());
    ASSERT_TRUE(key.ok()) << key.error();
    ASSERT_TRUE(wait_until([&] { return tracker_->run(*key)->metrics.total_points() > 0; }, 15000));
    const int64_t id = tracker_->run(*key)->store_id;
    const pid_t pid = std::atoi(tracker_->run(*key)->job_id.c_str());
    tracker_.reset();
    EXPECT_NE(::kill(pid, 0), 0);  // stopped and reaped
    const StoredRun stored = *history_->run(id);
    EXPECT_EQ(stored.state, RunState::kInterrupted);
    EXPECT_EQ(stored.state_detail, "slipway was closed while it ran");
}

TEST_F(RunTrackerTest, ARunReleasedWhileItTrainsIsStillOursAndHasItsEndStored) {
    qputenv("FAKE_ENGINE_MODE", "hang");
    const Result<int> key = tracker_->submit_local(testing_util::demo_config());
    ASSERT_TRUE(key.ok()) << key.error();
    ASSERT_TRUE(wait_until([&] { return tracker_->run(*key)->metrics.total_points() > 0; }, 15000));
    const int64_t id = tracker_->run(*key)->store_id;
    const std::string training = "the run is still training; cancel it first";
    EXPECT_EQ(tracker_->delete_stored(id).message(), training);
    tracker_->release(*key);
    EXPECT_EQ(tracker_->local_runs_active(), 1);                 // its engine is still ours until it exits
    EXPECT_EQ(tracker_->delete_stored(id).message(), training);  // released, its end is still to be stored
    EXPECT_TRUE(history_->run(id).ok());
    // Opened again from the Runs page: our own run again (not another process's), cancellable.
    const Result<int> again = tracker_->resume(id);
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_EQ(tracker_->run(*again)->source, RunKind::kLocal);
    EXPECT_FALSE(tracker_->run(*again)->state_from_store);
    EXPECT_TRUE(tracker_->run(*again)->cancellable);
    ASSERT_TRUE(tracker_->cancel(*again).ok());
    // Released once more while it stops: its row still learns the end.
    tracker_->release(*again);
    EXPECT_TRUE(wait_until([&] { return tracker_->local_runs_active() == 0; }, 15000));
    EXPECT_EQ(history_->run(id)->state, RunState::kCancelled);
    EXPECT_TRUE(tracker_->delete_stored(id).ok());  // ended: it may go
}

// Resume refuses what it cannot follow before it lets the shown run go: a row without a log, a run on a
// cluster with no profile (this tracker has no clusters at all).
TEST_F(RunTrackerTest, AResumeThatCannotFollowLeavesTheShownRunAsItWas) {
    StoredRun failed_submit;
    failed_submit.name = "refused";
    failed_submit.cluster = "hpc";
    failed_submit.run_id = "refused-20261128-1";
    failed_submit.state = RunState::kFailed;
    const Result<int64_t> no_log_row = history_->add_run(failed_submit);
    ASSERT_TRUE(no_log_row.ok()) << no_log_row.error();
    const int64_t no_log = *no_log_row;
    const Result<int> shown = tracker_->show_stored(no_log);
    ASSERT_TRUE(shown.ok()) << shown.error();
    const Result<int> refused = tracker_->resume(no_log);
    ASSERT_FALSE(refused.ok()) << *refused;
    EXPECT_EQ(refused.error(), "run " + std::to_string(no_log) + " has no log to follow");
    EXPECT_NE(tracker_->run(*shown), nullptr);

    StoredRun on_cluster = failed_submit;
    on_cluster.run_id = "refused-20261128-2";  // run ids are unique
    on_cluster.job_id = "12";
    on_cluster.log_path = "/home/u/slipway/runs/x/mllog.txt";
    const Result<int64_t> job_row = history_->add_run(on_cluster);
    ASSERT_TRUE(job_row.ok()) << job_row.error();
    const int64_t job = *job_row;
    const Result<int> shown_job = tracker_->show_stored(job);
    ASSERT_TRUE(shown_job.ok()) << shown_job.error();
    const Result<int> no_profile = tracker_->resume(job);
    ASSERT_FALSE(no_profile.ok()) << *no_profile;
    EXPECT_EQ(no_profile.error(),
              "run " + std::to_string(job) + " ran on cluster hpc, which has no profile any more");
    EXPECT_NE(tracker_->run(*shown_job), nullptr);
}

TEST_F(RunTrackerTest, ACancelledLocalRunIsCancelledWithoutAFailureAlert) {
    const int key = run_local("hang");
    const TrackedRun* run = tracker_->run(key);
    EXPECT_EQ(run->state, RunState::kCancelled);
    EXPECT_EQ(run->metrics.status, "aborted");  // the engine's answer to SIGTERM: not a failure here
    EXPECT_EQ(alerts_for(key, RunAlertKind::kFailed), 0);
    EXPECT_EQ(history_->run(run->store_id)->state, RunState::kCancelled);
    EXPECT_EQ(tracker_->local_runs_active(), 0);
    EXPECT_FALSE(tracker_->cancel(key).ok());  // nothing left to cancel
}

TEST_F(RunTrackerTest, AnEngineThatAbortsAndExitsGivesOneAlert) {
    const int key = run_local("abort");  // run_stop aborted in the log, exit code 1
    EXPECT_EQ(tracker_->run(key)->state, RunState::kFailed);
    EXPECT_EQ(tracker_->run(key)->metrics.status, "aborted");
    EXPECT_EQ(alerts_for(key, RunAlertKind::kFailed), 1);
    EXPECT_EQ(alerts_.size(), 1u);
}

// The other door: `slipway run` (the run service in another process) runs the engine; the app follows its
// log and shows the state the CLI stores, never writing one of its own (a cancel is the CLI's "cancelled",
// not the app's reading of the log's run_stop "aborted"), and its Cancel asks that engine to stop.
// `slipway run` of the demo with the stand-in engine waiting to be stopped; the id of its row once it runs
// (the newest row, the `runs`-th), 0 when it did not start.
int64_t start_cli_run(QProcess& cli, RunHistory& store, size_t runs) {
    qputenv("FAKE_ENGINE_MODE", "hang");
    cli.start(QString::fromUtf8(test_paths::slipway_bin()),
              {"run", test_paths::source_dir("/resources/presets/demo-tiny.json"), "--engine",
               testing_util::fake_engine()});
    qunsetenv("FAKE_ENGINE_MODE");
    if (!cli.waitForStarted(10000)) return 0;
    int64_t id = 0;
    wait_until(
        [&] {
            const Result<std::vector<StoredRun>> rows = store.runs();
            if (rows.ok() && rows->size() == runs && rows->front().state == RunState::kRunning)
                id = rows->front().id;
            return id != 0;
        },
        15000);
    return id;
}

TEST(RunTrackerAndCli, ALocalRunTheCliRunsIsFollowedAndCancelledByTheAppWhichLeavesItsStateToTheCli) {
    testing_util::IsolatedHome home;
    Result<std::unique_ptr<RunHistory>> store = RunHistory::open(RunHistory::default_path());
    ASSERT_TRUE(store.ok()) << store.error();
    FollowService follow(20);
    RunTracker::Options options;
    options.store_watch_ms = 100;
    RunTracker tracker(store->get(), &follow, nullptr, options);

    QProcess cli;
    const int64_t id = start_cli_run(cli, **store, 1);
    ASSERT_NE(id, 0);
    // A second window's startup sweep leaves it alone: its engine is alive.
    tracker.recover_after_restart();
    EXPECT_EQ((*store)->run(id)->state, RunState::kRunning);
    const Result<int> key = tracker.resume(id);
    ASSERT_TRUE(key.ok()) << key.error();
    EXPECT_TRUE(tracker.run(*key)->state_from_store);
    ASSERT_TRUE(
        wait_until([&] { return tracker.run(*key)->metrics.points(Metric::kTrainLoss).size() == 2; }, 15000));

    ::kill(static_cast<pid_t>(cli.processId()), SIGINT);  // Ctrl-C in the CLI's terminal
    ASSERT_TRUE(cli.waitForFinished(20000));
    EXPECT_EQ(cli.exitCode(), 1) << cli.readAllStandardError().toStdString();
    ASSERT_TRUE(wait_until([&] { return tracker.run(*key)->state == RunState::kCancelled; }, 10000))
        << to_db_text(tracker.run(*key)->state);
    EXPECT_EQ(tracker.run(*key)->metrics.status, "aborted");  // its log was read to the end
    EXPECT_EQ((*store)->run(id)->state, RunState::kCancelled);

    // And the app cancels a run the CLI runs: its engine is asked to stop, the CLI stores the end.
    QProcess second;
    const int64_t second_id = start_cli_run(second, **store, 2);
    ASSERT_NE(second_id, 0);
    const Result<int> second_key = tracker.resume(second_id);
    ASSERT_TRUE(second_key.ok()) << second_key.error();
    EXPECT_TRUE(tracker.run(*second_key)->cancellable);
    ASSERT_TRUE(wait_until(
        [&] { return tracker.run(*second_key)->metrics.points(Metric::kTrainLoss).size() == 2; }, 15000));
    ASSERT_TRUE(tracker.cancel(*second_key).ok());
    ASSERT_TRUE(second.waitForFinished(20000));
    EXPECT_EQ(second.exitCode(), 1);
    EXPECT_TRUE(second.readAllStandardOutput().contains(
        "final_state=cancelled (stopped by SIGTERM from another process)"));
    ASSERT_TRUE(wait_until([&] { return tracker.run(*second_key)->state == RunState::kCancelled; }, 10000));
    EXPECT_FALSE(tracker.run(*second_key)->cancellable);
    EXPECT_EQ((*store)->run(second_id)->state_detail, "stopped by SIGTERM from another process");
}

TEST_F(RunTrackerTest, RunsTheLastSessionLeftLiveAreInterruptedOrIncomplete) {
    StoredRun local;
    local.name = "was training";
    local.cluster = kLocalCluster;
    local.state = RunState::kRunning;
    StoredRun followed = local;
    followed.name = "was followed";
    followed.cluster = "hpc";
    followed.state = RunState::kFollowing;
    StoredRun job = local;
    job.name = "a queued job";
    job.cluster = "hpc";
    job.job_id = "12";
    job.state = RunState::kPending;
    const int64_t a = *history_->add_run(local), b = *history_->add_run(followed),
                  c = *history_->add_run(job);
    tracker_->recover_after_restart();
    EXPECT_EQ(history_->run(a)->state, RunState::kInterrupted);  // its engine died with that session
    EXPECT_EQ(history_->run(b)->state, RunState::kIncomplete);
    EXPECT_EQ(history_->run(c)->state, RunState::kPending);  // Slurm still has it: resumed later
}

TEST_F(RunTrackerTest, AnOpenedLogIsReadOnceAndStoredOncePerFile) {
    std::vector<int> loaded;
    QObject::connect(tracker_.get(), &RunTracker::loaded, [&](int key) { loaded.push_back(key); });
    for (int pass = 0; pass < 2; ++pass) {
        for (const QString& log : testing_util::fixture_logs())
            ASSERT_TRUE(tracker_->open_log(log).ok());
        ASSERT_TRUE(wait_until([&] { return loaded.size() == 3u * (pass + 1); }));
    }
    EXPECT_EQ(tracker_->keys().size(), 3u);  // opening a file again replaces its run
    EXPECT_EQ(history_->runs()->size(), 3u);
    for (int key : tracker_->keys()) {
        const TrackedRun* run = tracker_->run(key);
        EXPECT_FALSE(run->loading);
        EXPECT_EQ(run->state, RunState::kCompleted) << run->name;  // run_stop success
        EXPECT_EQ(history_->run(run->store_id)->state, RunState::kCompleted);
        EXPECT_TRUE(alerts_.empty());  // reading a finished log alerts nobody
    }
    EXPECT_FALSE(tracker_->open_log(dir_.filePath("missing.txt")).ok());
}

TEST_F(RunTrackerTest, ReleasingARunStopsItsFollowAndForgetsIt) {
    const QString log = dir_.filePath("mllog.txt");
    testing_util::append_file(log, testing_util::mllog_line("train_loss", 3.0, 1, 8));
    const int key = tracker_->follow_log(log, "live");
    ASSERT_TRUE(wait_until([&] { return tracker_->run(key)->metrics.total_points() == 1; }));
    const int follow_id = tracker_->run(key)->follow_id;
    EXPECT_TRUE(follow_.active(follow_id));
    int released = 0;
    QObject::connect(tracker_.get(), &RunTracker::run_released, [&](int k) { released = k; });
    tracker_->release(key);
    EXPECT_EQ(released, key);
    EXPECT_EQ(tracker_->run(key), nullptr);
    EXPECT_FALSE(follow_.active(follow_id));
    // A followed log says how it ended through its run_stop.
    const int again = tracker_->follow_log(log, "again");
    testing_util::append_file(
        log,
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 5, \"event_type\": \"INTERVAL_END\", "
        "\"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"aborted\"}}\n");
    ASSERT_TRUE(wait_until([&] { return tracker_->run(again)->state == RunState::kFailed; }));
    EXPECT_EQ(tracker_->run(again)->state_detail, "run_stop status aborted");
}

}  // namespace
}  // namespace slipway::app
