// Headless tests of the RunTracker's cluster half over a FakeCluster (tests/app/fake_cluster.h): the whole
// life of a Slurm run without a window (submit, pending, running, then completed / failed / cancelled /
// timed out), a refused submission, a refused scancel, a dropped connection shared by three runs, an
// edited profile whose runs keep being followed, a job that looks ended while it is requeued, and the
// Slurm states of a multi-node job's nodes while it runs. The same
// lifecycle on the real local Slurm is in gui_cluster_tests (remote_run_cluster_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>

#include <QElapsedTimer>
#include <QTemporaryDir>

#include "fake_cluster.h"
#include "history/run_history.h"
#include "remote/slurm/sbatch_script.h"
#include "runs/cluster_sessions.h"
#include "runs/run_tracker.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::mllog_line;
using testing_util::wait_until;

const std::string kAborted =
    ":::MLLOG {\"namespace\": \"\", \"time_ms\": 9, \"event_type\": \"INTERVAL_END\", \"key\": \"run_stop\", "
    "\"value\": null, \"metadata\": {\"status\": \"aborted\"}}\n";
const std::string kRunStop =
    ":::MLLOG {\"namespace\": \"\", \"time_ms\": 9, \"event_type\": \"INTERVAL_END\", \"key\": \"run_stop\", "
    "\"value\": null, \"metadata\": {\"status\": \"success\"}}\n";

remote::ClusterProfile profile(const std::string& host = "login.example.org") {
    remote::ClusterProfile p;
    p.name = "hpc";
    p.host = host;
    p.user = "researcher";
    return p;
}

class RunTrackerCluster : public ::testing::Test {
protected:
    void SetUp() override {
        Result<std::unique_ptr<RunHistory>> store =
            RunHistory::open(dir_.filePath("history.sqlite").toStdString());
        ASSERT_TRUE(store.ok()) << store.error();
        store_ = std::move(*store);
        sessions_.set_connector(cluster_.connector());
        sessions_.set_profiles({profile()});
        sessions_.set_store_path(
            QString::fromStdString(store_->path()));  // workers record jobs on their own connection
        RunTracker::Options options;
        options.resource_root = QString::fromUtf8(test_paths::source_dir());
        options.engine_binary = testing_util::fake_engine();  // uploaded as the engine: any file will do
        options.job_poll_ms = 50;
        options.after_run_stop_ms = 10;
        options.end_rule.settle = std::chrono::milliseconds(300);
        tracker_ = std::make_unique<RunTracker>(store_.get(), &follow_, &sessions_, options);
        QObject::connect(tracker_.get(), &RunTracker::alert,
                         [this](int key, const RunAlert& a) { alerts_.emplace_back(key, a); });
        QObject::connect(tracker_.get(), &RunTracker::run_added,
                         [this](int key) { states_[key].push_back(tracker_->run(key)->state); });
        QObject::connect(tracker_.get(), &RunTracker::run_changed, [this](int key) {
            const TrackedRun* run = tracker_->run(key);
            if (run != nullptr && (states_[key].empty() || states_[key].back() != run->state))
                states_[key].push_back(run->state);
        });
        QObject::connect(tracker_.get(), &RunTracker::message, [this](const QString& m) { messages_ << m; });
        QObject::connect(tracker_.get(), &RunTracker::connection_changed,
                         [this](const QString&, bool up, const QString&) { (up ? ups_ : downs_)++; });
    }

    // Submits the demo and waits until Slurm has queued it; returns its key.
    int submit() {
        const Result<int> key = tracker_->submit_cluster(testing_util::demo_config(), "hpc");
        EXPECT_TRUE(key.ok()) << key.error();
        if (!key.ok()) return 0;
        EXPECT_TRUE(wait_until([&] { return tracker_->run(*key)->state == RunState::kPending; }))
            << messages_.join('\n').toStdString();
        return *key;
    }
    std::string job(int key) const { return tracker_->run(key)->job_id; }
    // A row another process (the CLI) wrote for its job on this cluster: no tracked run owns it.
    int64_t add_row_of_another_process(const QString& job_id, RunState state) {
        StoredRun other;
        other.name = "from-the-cli";
        other.cluster = "hpc";
        other.run_id = "from-the-cli-20261127-030000-" + job_id.toStdString();
        other.job_id = job_id.toStdString();
        other.state = state;
        other.started_ms = now_ms();
        const Result<int64_t> row = store_->add_run(other);
        EXPECT_TRUE(row.ok()) << row.error();
        return row.ok() ? *row : 0;
    }
    std::string log(int key) const { return tracker_->run(key)->log_path; }
    bool reaches(int key, RunState state) {
        return wait_until([&] { return tracker_->run(key)->state == state; });
    }
    int alerts_for(int key) const {
        int n = 0;
        for (const auto& [k, a] : alerts_)
            n += k == key ? 1 : 0;
        return n;
    }

    QTemporaryDir dir_;
    testing_util::FakeCluster cluster_;
    ClusterSessions sessions_;
    FollowService follow_{20};
    std::unique_ptr<RunHistory> store_;
    std::unique_ptr<RunTracker> tracker_;
    std::vector<std::pair<int, RunAlert>> alerts_;
    std::map<int, std::vector<RunState>> states_;
    QStringList messages_;
    int ups_ = 0, downs_ = 0;
};

TEST_F(RunTrackerCluster, SubmittedPendingRunningCompleted) {
    const int key = submit();
    EXPECT_FALSE(job(key).empty());
    EXPECT_TRUE(tracker_->run(key)->cancellable);
    cluster_.set_job(job(key), "RUNNING");
    ASSERT_TRUE(reaches(key, RunState::kRunning));
    EXPECT_EQ(tracker_->run(key)->slurm_state, "RUNNING");
    EXPECT_TRUE((tracker_->run(key)->state_detail.find("node01") != std::string::npos));
    cluster_.append_log(log(key), "0: step 1\n" + mllog_line("train_loss", 3.0, 1, 8) +
                                      mllog_line("train_loss", 2.0, 2, 16) + kRunStop);
    ASSERT_TRUE(wait_until([&] { return tracker_->run(key)->metrics.run_stop_ms.has_value(); }));
    cluster_.set_job(job(key), "COMPLETED");
    ASSERT_TRUE(reaches(key, RunState::kCompleted));
    const TrackedRun* run = tracker_->run(key);
    EXPECT_EQ(states_[key], (std::vector<RunState>{RunState::kSubmitting, RunState::kPending,
                                                   RunState::kRunning, RunState::kCompleted}));
    EXPECT_FALSE(run->cancellable);
    EXPECT_EQ(alerts_for(key), 1);  // run_stop's "finished"; Slurm's COMPLETED adds none
    EXPECT_EQ(alerts_.front().second.kind, RunAlertKind::kFinished);
    const StoredRun stored = *store_->run(run->store_id);
    EXPECT_EQ(stored.state, RunState::kCompleted);
    EXPECT_EQ(stored.slurm_state, "COMPLETED");
    EXPECT_EQ(stored.job_id, job(key));
    EXPECT_EQ(stored.log_path, log(key));
    ASSERT_TRUE(wait_until([&] { return *store_->point_count(run->store_id) == 2; }));
    EXPECT_EQ(tracker_->session_connections(), 7);  // one set for the session, not one per run
    tracker_->release(key);
    EXPECT_EQ(*store_->point_count(store_->runs()->front().id), 2);  // nothing twice after release
}

TEST_F(RunTrackerCluster, AFailedJobWithoutRunStopIsFailedWithSlurmsWord) {
    const int key = submit();
    cluster_.set_job(job(key), "NODE_FAIL");
    ASSERT_TRUE(reaches(key, RunState::kFailed));
    EXPECT_EQ(tracker_->run(key)->slurm_state, "NODE_FAIL");
    EXPECT_EQ(store_->run(tracker_->run(key)->store_id)->slurm_state, "NODE_FAIL");
    ASSERT_EQ(alerts_for(key), 1);
    EXPECT_EQ(alerts_.front().second.kind, RunAlertKind::kFailed);
    EXPECT_NE(alerts_.front().second.message.find("NODE_FAIL"), std::string::npos);
}

TEST_F(RunTrackerCluster, AJobPastItsTimeLimitIsTimeoutWithOneAlert) {
    const int key = submit();
    cluster_.set_job(job(key), "RUNNING");
    ASSERT_TRUE(reaches(key, RunState::kRunning));
    // Slurm's SIGTERM: the engine logs run_stop aborted, and Slurm's TIMEOUT arrives before the follower
    // (every 2 s) reads that tail. One alert, not one for each.
    cluster_.append_log(log(key), mllog_line("train_loss", 3.0, 1, 8) + kAborted);
    cluster_.set_job(job(key), "TIMEOUT");
    ASSERT_TRUE(reaches(key, RunState::kTimeout));
    ASSERT_TRUE(wait_until([&] { return tracker_->run(key)->metrics.run_stop_ms.has_value(); }));
    EXPECT_EQ(alerts_for(key), 1);
}

TEST_F(RunTrackerCluster, AProfileEditedDuringTheSubmissionKeepsItsJob) {
    const Result<int> key = tracker_->submit_cluster(testing_util::demo_config(), "hpc");
    ASSERT_TRUE(key.ok());
    ASSERT_TRUE(wait_until([&] {  // the deployment has begun on the old session's worker
        for (const std::string& command : cluster_.commands()) {
            if (command.find("$HOME") != std::string::npos) return true;
        }
        return false;
    }));
    // Edited now: the old session finishes the submission (its worker records the job in the store),
    // its answer goes with it; the new session takes the run over from the store.
    sessions_.set_profiles({profile("login2.example.org")});
    ASSERT_TRUE(wait_until([&] { return !tracker_->run(*key)->job_id.empty(); }))
        << tracker_->run(*key)->state_detail;
    EXPECT_EQ(tracker_->run(*key)->state, RunState::kPending);
    cluster_.set_job(job(*key), "COMPLETED");
    ASSERT_TRUE(reaches(*key, RunState::kCompleted));
}

TEST_F(RunTrackerCluster, ASubmissionSlurmRefusesEndsFailedWithTheReason) {
    cluster_.refuse_submissions("Requested node configuration is not available");
    const Result<int> key = tracker_->submit_cluster(testing_util::demo_config(), "hpc");
    ASSERT_TRUE(key.ok());
    ASSERT_TRUE(reaches(*key, RunState::kFailed));
    EXPECT_TRUE((tracker_->run(*key)->state_detail.find("Requested node configuration") != std::string::npos))
        << tracker_->run(*key)->state_detail;
    EXPECT_TRUE(tracker_->run(*key)->job_id.empty());
    EXPECT_EQ(store_->run(tracker_->run(*key)->store_id)->state, RunState::kFailed);
    EXPECT_EQ(alerts_for(*key), 1);
    EXPECT_FALSE(tracker_->submit_cluster(testing_util::demo_config(), "nowhere").ok());
}

TEST_F(RunTrackerCluster, CancelSendsScancelAndARefusalIsReported) {
    const int key = submit();
    cluster_.set_job(job(key), "RUNNING");
    ASSERT_TRUE(reaches(key, RunState::kRunning));
    cluster_.refuse_scancel("scancel: error: Kill job error on job id " + job(key) +
                            ": Access/permission denied");
    ASSERT_TRUE(tracker_->cancel(key).ok());
    ASSERT_TRUE(wait_until([&] { return messages_.join('\n').contains("Cancelling job"); }));
    EXPECT_TRUE(messages_.join('\n').contains("Access/permission denied"))
        << messages_.join('\n').toStdString();
    EXPECT_EQ(tracker_->run(key)->state, RunState::kRunning);  // still running: nothing pretends otherwise
    cluster_.refuse_scancel("");
    ASSERT_TRUE(tracker_->cancel(key).ok());
    // The engine answers SIGTERM with run_stop "aborted": asked for, so no failure alert.
    cluster_.append_log(log(key), mllog_line("train_loss", 3.0, 1, 8) + kAborted);
    ASSERT_TRUE(reaches(key, RunState::kCancelled));
    EXPECT_EQ(cluster_.job_state(job(key)), "CANCELLED");
    EXPECT_EQ(store_->run(tracker_->run(key)->store_id)->state, RunState::kCancelled);
    ASSERT_TRUE(wait_until([&] { return tracker_->run(key)->metrics.run_stop_ms.has_value(); }));
    EXPECT_EQ(alerts_for(key), 0);
}

TEST_F(RunTrackerCluster, AConnectionLostUnderThreeRunsIsReportedOnceAndResumedOnce) {
    std::vector<int> keys = {submit(), submit(), submit()};
    for (int key : keys)
        cluster_.set_job(job(key), "RUNNING");
    for (int key : keys)
        ASSERT_TRUE(reaches(key, RunState::kRunning));
    const int downs_before = downs_, ups_before = ups_;
    cluster_.drop_connection();
    cluster_.fail_next(remote::FakeFault::kDropConnection, 3);  // a few reconnects fail before one works
    for (int key : keys)
        cluster_.append_log(log(key),
                            mllog_line("train_loss", 3.0, 1, 8) + mllog_line("train_loss", 2.0, 2, 16));
    ASSERT_TRUE(wait_until([&] {
        for (int key : keys) {
            if (tracker_->run(key)->metrics.points(Metric::kTrainLoss).size() != 2) return false;
        }
        return true;
    }));
    wait_until([] { return false; }, 300);  // more polls: they must not repeat the messages
    EXPECT_EQ(downs_ - downs_before, 1);
    EXPECT_EQ(ups_ - ups_before, 1);
    EXPECT_GE(cluster_.reconnects(), 1);
    for (int key : keys)
        EXPECT_EQ(tracker_->run(key)->state, RunState::kRunning);
    EXPECT_EQ(tracker_->session_connections(), 7);
}

TEST_F(RunTrackerCluster, EditingTheProfileKeepsFollowingItsRuns) {
    const int key = submit();
    cluster_.set_job(job(key), "RUNNING");
    ASSERT_TRUE(reaches(key, RunState::kRunning));
    cluster_.append_log(log(key), mllog_line("train_loss", 3.0, 1, 8));
    ASSERT_TRUE(wait_until([&] { return tracker_->run(key)->metrics.total_points() == 1; }));
    sessions_.set_profiles({profile("login2.example.org")});  // a new session replaces the old one
    cluster_.append_log(log(key), mllog_line("train_loss", 2.0, 2, 16) + kRunStop);
    ASSERT_TRUE(wait_until([&] { return tracker_->run(key)->metrics.total_points() == 2; }));
    cluster_.set_job(job(key), "COMPLETED");
    ASSERT_TRUE(reaches(key, RunState::kCompleted));
    EXPECT_EQ(tracker_->run(key)->metrics.points(Metric::kTrainLoss).size(), 2u);  // nothing read twice
    EXPECT_EQ(tracker_->session_connections(), 7);  // the old session's set is gone
    // A removed profile: its live runs say so and stop being followed.
    const int other = submit();
    sessions_.set_profiles({});
    EXPECT_TRUE((tracker_->run(other)->state_detail.find("removed") != std::string::npos));
    EXPECT_FALSE(tracker_->run(other)->cancellable);
    EXPECT_EQ(tracker_->session_connections(), 0);
}

TEST_F(RunTrackerCluster, AJobSlurmForgotIsUnknownUnlessItsLogSaysSuccess) {
    const int lost = submit();
    const int done = submit();
    cluster_.append_log(log(done), mllog_line("train_loss", 2.0, 1, 8) + kRunStop);
    ASSERT_TRUE(wait_until([&] { return tracker_->run(done)->metrics.run_stop_ms.has_value(); }));
    cluster_.set_job(job(lost), "");
    cluster_.set_job(job(done), "");
    ASSERT_TRUE(reaches(lost, RunState::kUnknown));
    ASSERT_TRUE(reaches(done, RunState::kCompleted));
}

// The script's own requeue after the time limit (its log says so): FAILED for longer than an end takes to
// count is not the end; the job is PENDING again, runs and completes, and the run with it.
TEST_F(RunTrackerCluster, ARequeuedJobIsFollowedIntoItsNextRun) {
    const int key = submit();
    cluster_.set_job(job(key), "RUNNING");
    ASSERT_TRUE(reaches(key, RunState::kRunning));
    cluster_.append_log(log(key), mllog_line("train_loss", 3.0, 1, 8) + kAborted +
                                      std::string(remote::kRequeueAnnouncement) + job(key) +
                                      " (restart 1 of at most 2)\n");
    ASSERT_TRUE(wait_until([&] { return tracker_->run(key)->job_watch.requeue_announced(); }));
    cluster_.set_job(job(key), "FAILED");
    // Far past the settle (300 ms): still not ended, Slurm asked again and again.
    EXPECT_FALSE(wait_until([&] { return is_terminal(tracker_->run(key)->state); }, 1500));
    cluster_.set_job(job(key), "PENDING");
    ASSERT_TRUE(wait_until([&] { return messages_.join('\n').contains("again (requeued)"); }))
        << messages_.join('\n').toStdString();
    cluster_.set_job(job(key), "RUNNING");
    cluster_.append_log(log(key), mllog_line("train_loss", 2.0, 2, 16) + kRunStop);
    // The next run's lines are still followed.
    ASSERT_TRUE(
        wait_until([&] { return tracker_->run(key)->metrics.points(Metric::kTrainLoss).size() == 2; }));
    cluster_.set_job(job(key), "COMPLETED");
    ASSERT_TRUE(reaches(key, RunState::kCompleted));
}

// Without an announcement (Slurm may requeue a preempted job) an end counts only once it has stayed for the
// settle; then with Slurm's word.
TEST_F(RunTrackerCluster, AnEndCountsOnceItStays) {
    const int key = submit();
    cluster_.set_job(job(key), "RUNNING");
    ASSERT_TRUE(reaches(key, RunState::kRunning));
    QElapsedTimer seen;
    seen.start();
    cluster_.set_job(job(key), "PREEMPTED");
    ASSERT_TRUE(reaches(key, RunState::kFailed));
    EXPECT_GE(seen.elapsed(), 250);  // the settle (300 ms), less a poll's slack
    EXPECT_EQ(tracker_->run(key)->slurm_state, "PREEMPTED");
}

// A job on two nodes: each node's Slurm state is asked with the job's (one sinfo of its host list) and kept
// while it runs; a change (node2 stops answering) comes as run_changed; the states go when the run ends.
TEST_F(RunTrackerCluster, AMultiNodeJobsNodeStatesAreKeptWhileItRuns) {
    const int key = submit();
    cluster_.set_job_nodes(job(key), "node[1-2]");
    cluster_.set_node_state("node1", "allocated");
    cluster_.set_node_state("node2", "allocated");
    cluster_.set_job(job(key), "RUNNING");
    ASSERT_TRUE(reaches(key, RunState::kRunning));
    const std::vector<remote::NodeState> both = {{"node1", "allocated"}, {"node2", "allocated"}};
    ASSERT_TRUE(wait_until([&] { return tracker_->run(key)->node_states == both; }));
    bool sinfo_of_the_job = false;
    for (const std::string& c : cluster_.commands())
        sinfo_of_the_job =
            sinfo_of_the_job || c.find("sinfo -h -N -o '%N|%P|%T|%c|%m|%G' -n 'node[1-2]'") == 0;
    EXPECT_TRUE(sinfo_of_the_job);

    cluster_.set_node_state("node2", "allocated*");
    ASSERT_TRUE(wait_until([&] {
        const auto& n = tracker_->run(key)->node_states;
        return n.size() == 2 && n[1].state == "allocated*";
    }));
    cluster_.append_log(log(key), kRunStop);
    cluster_.set_job(job(key), "COMPLETED");
    ASSERT_TRUE(reaches(key, RunState::kCompleted));
    EXPECT_TRUE(tracker_->run(key)->node_states.empty());
}

// A run another process submitted (a row in the store that no tracked run owns): its Slurm state is stored
// by the same end rule, so a job that looks ended for a moment while it is requeued stays live.
TEST_F(RunTrackerCluster, ARunAnotherProcessSubmittedEndsByTheSameRule) {
    const int key = submit();  // connects the session the other run's row is asked over
    cluster_.set_job(job(key), "RUNNING");
    ASSERT_TRUE(reaches(key, RunState::kRunning));
    const int64_t row = add_row_of_another_process(QStringLiteral("555"), RunState::kRunning);
    ASSERT_NE(row, 0);
    const auto stored_state = [&] {
        const Result<std::vector<StoredRun>> runs = store_->cluster_runs();
        for (const StoredRun& r : runs.ok() ? *runs : std::vector<StoredRun>{})
            if (r.id == row) return r.state;
        return RunState::kUnknown;
    };
    cluster_.set_job("555", "PREEMPTED");
    // Far past the settle (300 ms) it would have ended; it comes back first.
    EXPECT_FALSE(wait_until([&] { return is_terminal(stored_state()); }, 200));
    cluster_.set_job("555", "PENDING");
    ASSERT_TRUE(wait_until([&] { return stored_state() == RunState::kPending; }));
    cluster_.set_job("555", "RUNNING");
    ASSERT_TRUE(wait_until([&] { return stored_state() == RunState::kRunning; }));
    QElapsedTimer seen;
    seen.start();
    cluster_.set_job("555", "COMPLETED");
    ASSERT_TRUE(wait_until([&] { return stored_state() == RunState::kCompleted; }));
    EXPECT_GE(seen.elapsed(), 250);  // counted once it stayed for the settle
}

// One watcher: each poll asks Slurm about every live job of the cluster, the tracked ones and a row another
// process submitted, with one squeue; ended jobs drop out of the next polls.
TEST_F(RunTrackerCluster, EveryLiveJobOfAClusterIsAskedWithOneSqueuePerPoll) {
    const std::vector<int> keys = {submit(), submit(), submit()};
    for (int key : keys)
        cluster_.set_job(job(key), "RUNNING");
    for (int key : keys)
        ASSERT_TRUE(reaches(key, RunState::kRunning));
    ASSERT_NE(add_row_of_another_process(QStringLiteral("555"), RunState::kPending), 0);
    cluster_.set_job("555", "RUNNING");
    const auto squeues = [&] {
        std::vector<std::string> found;
        for (const std::string& command : cluster_.commands())
            if (command.rfind("squeue", 0) == 0) found.push_back(command);
        return found;
    };
    const std::string all = "-j " + job(keys[0]) + "," + job(keys[1]) + "," + job(keys[2]) + ",555 ";
    ASSERT_TRUE(wait_until([&] {
        const std::vector<std::string> asked = squeues();
        return !asked.empty() && asked.back().find(all) != std::string::npos;
    })) << testing::PrintToString(squeues());
    // Over about six polls of 50 ms the squeues ask about several jobs each (all 4, unless a job's last
    // answer was still on its way when a poll came: it waits for the next one), never one squeue per job.
    const size_t before = squeues().size();
    wait_until([] { return false; }, 300);
    const std::vector<std::string> later = squeues();
    ASSERT_GT(later.size(), before);
    size_t jobs_asked = 0;
    for (size_t i = before; i < later.size(); ++i) {
        const std::string ids = later[i].substr(later[i].find("-j ") + 3);
        jobs_asked += 1 + static_cast<size_t>(std::count(ids.begin(), ids.begin() + ids.find(' '), ','));
    }
    EXPECT_GE(jobs_asked, 2 * (later.size() - before)) << testing::PrintToString(later);

    cluster_.set_job(job(keys[1]), "COMPLETED");
    ASSERT_TRUE(reaches(keys[1], RunState::kCompleted));
    const size_t ended = squeues().size();
    const std::string rest = "-j " + job(keys[0]) + "," + job(keys[2]) + ",555 ";
    EXPECT_TRUE(wait_until([&] {
        const std::vector<std::string> asked = squeues();
        return std::any_of(asked.begin() + static_cast<std::ptrdiff_t>(ended), asked.end(),
                           [&](const std::string& c) { return c.find(rest) != std::string::npos; });
    })) << testing::PrintToString(squeues());
}

}  // namespace
}  // namespace slipway::app
