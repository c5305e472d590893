// One run store, shown on the real local Slurm (tests/cluster over real SSH) without a window: a run the
// RunTracker submits goes through pending / running / completed and `slipway status`, `follow` and `fetch`
// (the real binary, in another process) find it by its run id; a run `slipway submit` sends shows up in
// the tracker's store within seconds and the tracker follows it to its end with its points stored.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>

#include "contract/hf_flags.h"
#include "history/run_history.h"
#include "remote/slurm/cluster_profile.h"
#include "runs/cluster_sessions.h"
#include "runs/run_tracker.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::wait_until;

using testing_util::Cli;
using testing_util::slipway;

RunConfig short_demo() {
    RunConfig config = testing_util::demo_config();
    const Result<FlagReport> flags =
        apply_hf_flags(config, {"--max_steps", "10", "--warmup_steps", "2", "--eval_steps", "5"});
    EXPECT_TRUE(flags.ok());
    return config;
}

class OneStoreOnSlurm : public ::testing::Test {
protected:
    void SetUp() override {
        env_ = testing_util::use_local_cluster(QString::fromUtf8(test_paths::engine_bin()));
        if (env_.empty()) GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
        if (!QFile::exists(QString::fromUtf8(test_paths::engine_bin())))
            GTEST_SKIP() << "no slipway-engine built";
        profile_ = testing_util::local_cluster_profile(env_, env_["SLIPWAY_REMOTE_DIR"] + "/one-store");
        ASSERT_TRUE(remote::ProfileStore().put(profile_).ok());  // the CLI finds it in clusters.json
        Result<std::unique_ptr<RunHistory>> store = RunHistory::open_default();
        ASSERT_TRUE(store.ok()) << store.error();
        store_ = std::move(*store);
        sessions_.set_profiles({profile_});
        sessions_.set_store_path(QString::fromStdString(store_->path()));
        RunTracker::Options options;
        options.resource_root = QString::fromUtf8(test_paths::source_dir());
        options.engine_binary = QString::fromUtf8(test_paths::engine_bin());
        options.job_poll_ms = 1000;
        options.store_watch_ms = 200;
        tracker_ = std::make_unique<RunTracker>(store_.get(), &follow_, &sessions_, options);
    }
    // `slipway submit` of the demo to the local Slurm, with these engine flags: its run id (empty when it
    // failed, with a test failure).
    QString submit_from_cli(const QStringList& flags) {
        const Cli submit = slipway(
            QStringList{
                "submit", QString::fromUtf8(test_paths::source_dir("/resources/presets/demo-tiny.json")),
                "--cluster", "local-slurm", "--engine", QString::fromUtf8(test_paths::engine_bin()), "--"} +
                flags,
            env_);
        EXPECT_EQ(submit.exit_code, 0) << submit.err.toStdString();
        const QString last = submit.out.trimmed().split('\n').last();
        EXPECT_TRUE(last.startsWith("run_id=")) << last.toStdString();
        return last.startsWith("run_id=") ? last.section(' ', 0, 0).mid(7) : QString();
    }
    void TearDown() override {
        tracker_.reset();
        qunsetenv("SLIPWAY_ENGINE");
        qunsetenv("SLIPWAY_KNOWN_HOSTS");
    }

    testing_util::IsolatedHome home_;
    std::map<QString, QString> env_;
    remote::ClusterProfile profile_;
    std::unique_ptr<RunHistory> store_;
    FollowService follow_;
    ClusterSessions sessions_;
    std::unique_ptr<RunTracker> tracker_;
};

TEST_F(OneStoreOnSlurm, ARunTheTrackerSubmittedIsListedFollowedAndFetchedByTheCli) {
    std::vector<RunState> states;
    QObject::connect(tracker_.get(), &RunTracker::run_changed, [&](int key) {
        if (states.empty() || states.back() != tracker_->run(key)->state)
            states.push_back(tracker_->run(key)->state);
    });
    const Result<int> key = tracker_->submit_cluster(short_demo(), "local-slurm");
    ASSERT_TRUE(key.ok()) << key.error();
    ASSERT_TRUE(wait_until([&] { return is_terminal(tracker_->run(*key)->state); }, 300'000));
    const TrackedRun* run = tracker_->run(*key);
    ASSERT_EQ(run->state, RunState::kCompleted) << run->state_detail;
    EXPECT_EQ(states.front(), RunState::kPending);                                     // after submitting
    ASSERT_TRUE(wait_until([&] { return run->metrics.status.has_value(); }, 30'000));  // the log's last lines
    EXPECT_EQ(run->metrics.status, "success");
    const QString run_id = QString::fromStdString(run->run_id);
    ASSERT_FALSE(run_id.isEmpty());

    const Cli status = slipway({"status"}, env_);
    EXPECT_EQ(status.exit_code, 0) << status.err.toStdString();
    bool listed = false;
    for (const QString& line : status.out.split('\n')) {
        const QStringList cols = line.split(' ', Qt::SkipEmptyParts);
        listed = listed || (cols.size() >= 4 && cols[0] == run_id && cols[1] == "local-slurm" &&
                            cols[2] == QString::fromStdString(run->job_id) && cols[3] == "COMPLETED");
    }
    EXPECT_TRUE(listed) << status.out.toStdString();
    const Cli follow = slipway({"follow", run_id, "--interval", "0.5"}, env_);
    EXPECT_EQ(follow.exit_code, 0) << follow.err.toStdString();
    EXPECT_TRUE(follow.out.contains("final_state=COMPLETED")) << follow.out.toStdString();
    const QString to = home_.path() + "/fetched";
    const Cli fetch = slipway({"fetch", run_id, "--to", to}, env_);
    EXPECT_EQ(fetch.exit_code, 0) << fetch.err.toStdString();
    EXPECT_TRUE(QFile::exists(to + "/output/mllog.txt"));
    EXPECT_FALSE(QDir(home_.path() + "/data/slipway/runs").exists());  // no JSON records any more
}

TEST_F(OneStoreOnSlurm, ARunTheCliSubmittedShowsUpInTheTrackersStoreAndIsFollowedToItsEnd) {
    // A connected session (as after the Clusters page's test): the tracker may ask about the new job.
    ClusterSession* session = sessions_.session("local-slurm");
    bool tested = false;
    QObject::connect(session, &ClusterSession::tested,
                     [&](int, bool ok, const QString&, const auto&) { tested = ok; });
    session->test();
    ASSERT_TRUE(wait_until([&] { return tested; }, 60'000));
    // A second window's tracker, without cluster sessions: the store watcher (PRAGMA data_version) is its
    // only way to learn about rows another process wrote.
    Result<std::unique_ptr<RunHistory>> other_store = RunHistory::open(store_->path());
    ASSERT_TRUE(other_store.ok());
    RunTracker::Options watch_only;
    watch_only.store_watch_ms = 200;
    RunTracker watcher(other_store->get(), &follow_, nullptr, watch_only);
    int store_changes = 0;
    QObject::connect(&watcher, &RunTracker::store_changed, [&] { ++store_changes; });

    const QString run_id = submit_from_cli({"--max_steps", "10", "--warmup_steps", "2", "--eval_steps", "5"});
    ASSERT_FALSE(run_id.isEmpty());
    // Seen by the tracker's store watcher (another process wrote it), without a reload.
    ASSERT_TRUE(wait_until([&] { return store_changes > 0; }, 10'000))
        << "data_version " << *store_->data_version() << ", rows " << store_->cluster_runs()->size();
    const Result<int64_t> row = store_->find_run(run_id.toStdString());
    ASSERT_TRUE(row.ok()) << row.error();
    // Its Slurm state is kept current over the connected session, though nobody follows it yet.
    ASSERT_TRUE(wait_until([&] { return store_->run(*row)->state != RunState::kPending; }, 120'000));
    // Resume following (the Runs page's button): followed to its end, points stored.
    const Result<int> key = tracker_->resume(*row);
    ASSERT_TRUE(key.ok()) << key.error();
    ASSERT_TRUE(wait_until([&] { return is_terminal(tracker_->run(*key)->state); }, 300'000));
    EXPECT_EQ(tracker_->run(*key)->state, RunState::kCompleted);
    ASSERT_TRUE(wait_until([&] { return tracker_->run(*key)->metrics.status.has_value(); }, 30'000));
    EXPECT_EQ(tracker_->run(*key)->metrics.status, "success");
    ASSERT_TRUE(wait_until([&] { return *store_->point_count(*row) >= 8; }, 10'000));
    EXPECT_EQ(store_->run(*row)->state, RunState::kCompleted);
    EXPECT_EQ(store_->run(*row)->slurm_state, "COMPLETED");
}

// Either door cancels what the other submitted: the CLI's `slipway cancel` stops a run the tracker submitted
// (the tracker sees Slurm's CANCELLED at its next poll), and the tracker's cancel stops a run `slipway
// submit` sent (the CLI's status, follow and fetch then see it cancelled, with its log and outputs).
TEST_F(OneStoreOnSlurm, ARunEitherDoorSubmittedIsCancelledByTheOther) {
    const auto running = [&](int key) { return tracker_->run(key)->state == RunState::kRunning; };
    // A run that would go on for many minutes.
    RunConfig long_demo = testing_util::demo_config();
    ASSERT_TRUE(apply_hf_flags(long_demo, {"--max_steps", "100000", "--eval_steps", "100000"}).ok());
    const Result<int> from_app = tracker_->submit_cluster(long_demo, "local-slurm");
    ASSERT_TRUE(from_app.ok()) << from_app.error();
    ASSERT_TRUE(wait_until([&] { return running(*from_app); }, 120'000))
        << tracker_->run(*from_app)->state_detail;
    const Cli cancel = slipway({"cancel", QString::fromStdString(tracker_->run(*from_app)->run_id)}, env_);
    EXPECT_EQ(cancel.exit_code, 0) << cancel.err.toStdString();
    ASSERT_TRUE(wait_until([&] { return is_terminal(tracker_->run(*from_app)->state); }, 60'000));
    EXPECT_EQ(tracker_->run(*from_app)->state, RunState::kCancelled);
    EXPECT_EQ(store_->run(tracker_->run(*from_app)->store_id)->state, RunState::kCancelled);

    const QString run_id =
        submit_from_cli({"--max_steps", "100000", "--eval_steps", "100000", "--save_steps", "100000"});
    ASSERT_FALSE(run_id.isEmpty());
    const Result<int64_t> row = store_->find_run(run_id.toStdString());
    ASSERT_TRUE(row.ok()) << row.error();
    const Result<int> from_cli = tracker_->resume(*row);  // the Runs page's "follow"
    ASSERT_TRUE(from_cli.ok()) << from_cli.error();
    ASSERT_TRUE(wait_until([&] { return running(*from_cli); }, 120'000));
    ASSERT_TRUE(wait_until(
        [&] { return !tracker_->run(*from_cli)->metrics.points(Metric::kTrainLoss).empty(); }, 60'000));
    ASSERT_TRUE(tracker_->cancel(*from_cli).ok());
    ASSERT_TRUE(wait_until([&] { return is_terminal(tracker_->run(*from_cli)->state); }, 60'000));
    EXPECT_EQ(tracker_->run(*from_cli)->state, RunState::kCancelled);
    const Cli status = slipway({"status", run_id}, env_);
    EXPECT_TRUE(status.out.contains(
        QRegularExpression(QRegularExpression::escape(run_id) + " +local-slurm +\\d+ +CANCELLED")))
        << status.out.toStdString();
    const Cli follow = slipway({"follow", run_id, "--interval", "0.5"}, env_);
    EXPECT_TRUE(follow.out.contains("final_state=CANCELLED")) << follow.out.toStdString();
    const QString to = home_.path() + "/cancelled";
    const Cli fetch = slipway({"fetch", run_id, "--to", to}, env_);
    EXPECT_EQ(fetch.exit_code, 0) << fetch.err.toStdString();
    EXPECT_TRUE(QFile::exists(to + "/output/mllog.txt"));
}

}  // namespace
}  // namespace slipway::app
