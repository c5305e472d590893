// The run registry (service/run_registry.h): the runs the app shows, by key, and the one rule by which a
// run's state changes and its row is written; with the real store behind a recording one.
#include <gtest/gtest.h>

#include <chrono>

#include "real_store_test.h"
#include "service/child_process.h"
#include "service/run_registry.h"

namespace slipway::app {
namespace {

class RunRegistryTest : public RealStoreTest {
protected:
    void SetUp() override {
        RealStoreTest::SetUp();
        if (HasFatalFailure()) return;
        registry_ = std::make_unique<RunRegistry>(RunRegistry::Options{5.0, 1000, {}}, store_.get());
    }
    // A tracked run with its own row, as a submission or a local run has.
    TrackedRun& stored_run(RunState state) {
        StoredRun row;
        row.name = "run " + std::to_string(++rows_);
        row.cluster = "hpc";
        row.run_id = "run-20261128-" + std::to_string(rows_);
        row.state = state;
        const Result<int64_t> id = real_->add(row);
        EXPECT_TRUE(id.ok()) << id.error();
        TrackedRun& run = registry_->add(RunKind::kClusterJob, row.name, state);
        run.store_id = id.ok() ? *id : 0;
        return run;
    }
    RunState stored_state(const TrackedRun& run) const { return history_->run(run.store_id)->state; }

    std::unique_ptr<RunRegistry> registry_;
    int rows_ = 0;
};

TEST_F(RunRegistryTest, RunsGetTheirOwnKeysAndAreFoundByRowRunIdAndFollow) {
    TrackedRun& file = registry_->add(RunKind::kLogFile, "a log", RunState::kReading);
    TrackedRun& job = stored_run(RunState::kSubmitting);
    EXPECT_NE(file.key, job.key);
    EXPECT_EQ(registry_->keys(), (std::vector<int>{file.key, job.key}));
    EXPECT_EQ(registry_->run_for_store(job.store_id), job.key);
    EXPECT_EQ(registry_->run_for_store(0), 0);  // an unstored run is nobody's row

    job.run_id = "run-20261128-1";
    EXPECT_FALSE(registry_->submitting_run_id(job.run_id));  // no submission under way
    job.submit_request = 4;
    EXPECT_TRUE(registry_->submitting_run_id(job.run_id));
    EXPECT_FALSE(registry_->submitting_run_id(""));

    // A file follow and a session follow may share an id: each is found among its own kind.
    file.follow_id = 7;
    job.follow_id = 7;
    EXPECT_EQ(registry_->find_by_follow(RunKind::kLocal, 7), &file);
    EXPECT_EQ(registry_->find_by_follow(RunKind::kClusterLog, 7), &job);
    EXPECT_EQ(registry_->find_by_follow(RunKind::kLogFile, 0), nullptr);

    const int gone = file.key;
    EXPECT_TRUE(registry_->remove(gone));
    EXPECT_FALSE(registry_->remove(gone));
    EXPECT_EQ(registry_->find(gone), nullptr);
    EXPECT_NE(registry_->add(RunKind::kLogFile, "next", RunState::kReading).key,
              gone);  // keys are not reused
}

TEST_F(RunRegistryTest, EachChangeIsOneWriteAndASameStateNone) {
    TrackedRun& run = stored_run(RunState::kPending);
    StateChange c = registry_->set_state(run, RunState::kRunning, "on node01", "RUNNING");
    EXPECT_TRUE(c.changed);
    EXPECT_TRUE(c.stored);
    EXPECT_EQ(c.store_problem, "");
    EXPECT_EQ(stored_state(run), RunState::kRunning);
    EXPECT_EQ(history_->run(run.store_id)->slurm_state, "RUNNING");
    c = registry_->set_state(run, RunState::kRunning, "on node01", "RUNNING");
    EXPECT_FALSE(c.changed);
    EXPECT_FALSE(c.stored);
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"set_state running"}));
    // A new detail alone is a change.
    EXPECT_TRUE(registry_->set_state(run, RunState::kRunning, "on node02").changed);
    EXPECT_EQ(history_->run(run.store_id)->state_detail, "on node02");
    EXPECT_EQ(run.slurm_state, "RUNNING");  // an empty Slurm word keeps the last one
}

TEST_F(RunRegistryTest, APollerNeverReopensAnEndNorCallsAStalledRunRunning) {
    TrackedRun& run = stored_run(RunState::kRunning);
    ASSERT_TRUE(registry_->set_state(run, RunState::kStalled, "no step for 60 s").changed);
    const StateChange again =
        registry_->set_state(run, RunState::kRunning, "on node01", "RUNNING", StateSource::kPoller);
    EXPECT_EQ(run.state, RunState::kStalled);
    EXPECT_EQ(stored_state(run), RunState::kStalled);
    EXPECT_EQ(run.state_detail, "on node01");  // what Slurm says still shows
    EXPECT_TRUE(again.changed);

    ASSERT_TRUE(
        registry_->set_state(run, RunState::kCompleted, "", "COMPLETED", StateSource::kPoller).changed);
    const StateChange late =
        registry_->set_state(run, RunState::kRunning, "", "RUNNING", StateSource::kPoller);
    EXPECT_FALSE(late.changed);
    EXPECT_EQ(run.state, RunState::kCompleted);
    EXPECT_EQ(stored_state(run), RunState::kCompleted);
    // The user's own word (the app's) still may change an ended run.
    EXPECT_TRUE(registry_->set_state(run, RunState::kFailed, "marked by hand").changed);
    EXPECT_EQ(stored_state(run), RunState::kFailed);
}

TEST_F(RunRegistryTest, APollersWriteKeepsAnEndAnotherProcessStored) {
    TrackedRun& run = stored_run(RunState::kRunning);
    // The CLI cancelled the job meanwhile and stored it; the app's copy is still running.
    ASSERT_TRUE(
        real_->set_state(run.store_id, RunState::kCancelled, "", "CANCELLED", StateWrite::kAlways).ok());
    ASSERT_TRUE(
        registry_->set_state(run, RunState::kRunning, "on node03", "RUNNING", StateSource::kPoller).changed);
    EXPECT_EQ(stored_state(run), RunState::kCancelled);
}

TEST_F(RunRegistryTest, RowsTheServiceOrAnotherProcessWritesAreNotWrittenAgain) {
    TrackedRun& ours = stored_run(RunState::kRunning);
    EXPECT_TRUE(registry_->set_state(ours, RunState::kCompleted, "", "", StateSource::kService).changed);
    TrackedRun& theirs = stored_run(RunState::kRunning);
    theirs.state_from_store = true;
    EXPECT_TRUE(registry_->set_state(theirs, RunState::kInterrupted, "").changed);
    TrackedRun& unstored = registry_->add(RunKind::kLogFile, "a log", RunState::kReading);
    const StateChange c = registry_->set_state(unstored, RunState::kCompleted, "");
    EXPECT_TRUE(c.changed);
    EXPECT_FALSE(c.stored);
    EXPECT_TRUE(store_->writes.empty());
    EXPECT_EQ(stored_state(ours), RunState::kRunning);
    EXPECT_EQ(stored_state(theirs), RunState::kRunning);
}

TEST_F(RunRegistryTest, AnEndTakesTheCancelAndLeavingRunningTheNodes) {
    TrackedRun& run = stored_run(RunState::kRunning);
    run.cancellable = true;
    run.node_states = {remote::NodeState{"node01", "allocated"}};
    ASSERT_TRUE(registry_->set_state(run, RunState::kStalled, "quiet").changed);
    EXPECT_EQ(run.node_states.size(), 1u);  // a stalled job still runs on its nodes
    EXPECT_TRUE(run.cancellable);
    ASSERT_TRUE(registry_->set_state(run, RunState::kPending, "requeued").changed);
    EXPECT_TRUE(run.node_states.empty());
    EXPECT_TRUE(run.cancellable);
    ASSERT_TRUE(registry_->set_state(run, RunState::kFailed, "NODE_FAIL").changed);
    EXPECT_FALSE(run.cancellable);
}

TEST_F(RunRegistryTest, AStoreThatCannotWriteIsReportedAndTheRunStillChanges) {
    TrackedRun& run = stored_run(RunState::kRunning);
    store_->refuse = "set_state";
    const StateChange c = registry_->set_state(run, RunState::kCompleted, "");
    EXPECT_TRUE(c.changed);
    EXPECT_TRUE(c.stored);
    EXPECT_EQ(c.store_problem, "database or disk is full");
    EXPECT_EQ(run.state, RunState::kCompleted);
    EXPECT_EQ(stored_state(run), RunState::kRunning);
}

MllogEvent step_event(double step) {
    MllogEvent e;
    e.key = "train_loss";
    e.value = 2.0;
    e.metadata = {{"step_num", step}, {"samples_count", step * 8}};
    return e;
}

TEST_F(RunRegistryTest, ALiveRunWithoutANewStepStallsOnceWithTheAlertAsItsDetail) {
    TrackedRun& live = stored_run(RunState::kRunning);
    live.live = true;
    TrackedRun& shown = registry_->add(RunKind::kLogFile, "an old log", RunState::kRunning);  // not live
    int64_t now = 0;
    for (TrackedRun* run : {&live, &shown}) {
        now = 0;
        for (int step = 1; step <= 4; ++step) {
            now += 2000;
            const MllogEvent e = step_event(step);
            run->metrics.add(e);
            (void)run->watch.on_event(e, run->metrics, now);
        }
    }
    EXPECT_TRUE(registry_->check_stalls(now + 9'000).empty());
    const std::vector<Stall> stalls = registry_->check_stalls(now + 10'000);
    ASSERT_EQ(stalls.size(), 1u);
    EXPECT_EQ(stalls[0].key, live.key);
    EXPECT_EQ(stalls[0].alert.kind, RunAlertKind::kStalled);
    EXPECT_TRUE(stalls[0].change.stored);
    EXPECT_EQ(live.state, RunState::kStalled);
    EXPECT_EQ(live.state_detail, stalls[0].alert.message);
    EXPECT_EQ(stored_state(live), RunState::kStalled);
    EXPECT_EQ(shown.state, RunState::kRunning);
    EXPECT_TRUE(registry_->check_stalls(now + 20'000).empty());  // once

    // A stall policy applies to runs added afterwards: twice the median interval (2 s) is a stall now.
    registry_->set_stall_policy(2.0, 1000);
    TrackedRun& strict = registry_->add(RunKind::kLogFile, "strict", RunState::kRunning);
    strict.live = true;
    for (int step = 1; step <= 4; ++step) {
        const MllogEvent e = step_event(step);
        strict.metrics.add(e);
        (void)strict.watch.on_event(e, strict.metrics, step * 2000);
    }
    EXPECT_TRUE(registry_->check_stalls(8000 + 3'999).empty());
    const std::vector<Stall> soon = registry_->check_stalls(8000 + 4'000);
    ASSERT_EQ(soon.size(), 1u);
    EXPECT_EQ(soon[0].key, strict.key);
}

MllogEvent stop_event(const char* status) {
    MllogEvent e;
    e.key = "run_stop";
    e.time_ms = 1715157926587;
    e.metadata = {{"status", status}};
    return e;
}

TEST_F(RunRegistryTest, EventsFoldIntoTheCurvesAndTheRowGetsOnlyTheNewPoints) {
    TrackedRun& run = stored_run(RunState::kRunning);
    run.live = true;
    run.metrics.target = 0.9;
    FoldedEvents first = registry_->fold(run, {step_event(1), step_event(2)}, false, 1000);
    EXPECT_EQ(first.first_new[static_cast<size_t>(Metric::kTrainLoss)], 0u);
    EXPECT_EQ(first.rows.size(), 2u);
    EXPECT_TRUE(first.new_steps);
    EXPECT_FALSE(first.stopped_before);
    FoldedEvents second = registry_->fold(run, {step_event(3)}, false, 2000);
    EXPECT_EQ(second.first_new[static_cast<size_t>(Metric::kTrainLoss)], 2u);
    ASSERT_EQ(second.rows.size(), 1u);
    EXPECT_EQ(second.rows[0].second.step, 3);
    EXPECT_EQ(run.metrics.points(Metric::kTrainLoss).size(), 3u);
    // No new step: the log says nothing new of a running run.
    EXPECT_FALSE(registry_->fold(run, {}, false, 3000).new_steps);

    EXPECT_TRUE(run.watch.median_step_interval_ms().has_value());
    // A rewritten log starts over, its stall watch too, keeping the target; an unstored run gives its row
    // nothing.
    FoldedEvents again = registry_->fold(run, {step_event(1)}, true, 4000);
    EXPECT_EQ(again.first_new[static_cast<size_t>(Metric::kTrainLoss)], 0u);
    EXPECT_EQ(run.metrics.points(Metric::kTrainLoss).size(), 1u);
    EXPECT_EQ(run.metrics.target, 0.9);
    EXPECT_FALSE(run.watch.median_step_interval_ms().has_value());  // one step: no interval yet
    TrackedRun& shown = registry_->add(RunKind::kLogFile, "a log", RunState::kReading);
    EXPECT_TRUE(registry_->fold(shown, {step_event(1)}, false, 0).rows.empty());
}

TEST_F(RunRegistryTest, OnlyALiveRunsWatchAlertsAndTheLogSaysHowAFileEnded) {
    TrackedRun& live = registry_->add(RunKind::kLogFile, "followed", RunState::kRunning);
    live.live = true;
    const FoldedEvents ended = registry_->fold(live, {step_event(1), stop_event("aborted")}, false, 0);
    ASSERT_EQ(ended.alerts.size(), 1u);
    EXPECT_EQ(ended.alerts[0].kind, RunAlertKind::kFailed);
    const LogVerdict followed = RunRegistry::log_verdict(live, ended, false);
    ASSERT_TRUE(followed.state.has_value());
    EXPECT_EQ(*followed.state, RunState::kFailed);  // a log nobody else reports on ends as run_stop says
    EXPECT_TRUE(followed.ended_by_log);

    TrackedRun& file = registry_->add(RunKind::kLogFile, "opened", RunState::kReading);
    const FoldedEvents read = registry_->fold(file, {step_event(1), stop_event("success")}, false, 0);
    EXPECT_TRUE(read.alerts.empty());  // a file read once raises no alerts
    EXPECT_FALSE(RunRegistry::log_verdict(file, read, false).state.has_value());  // not at its end yet
    const LogVerdict at_end = RunRegistry::log_verdict(file, read, true);
    ASSERT_TRUE(at_end.state.has_value());
    EXPECT_EQ(*at_end.state, RunState::kCompleted);

    // A Slurm job that logged run_stop: Slurm is asked now; its state is Slurm's to say.
    TrackedRun& job = stored_run(RunState::kRunning);
    job.live = true;
    const FoldedEvents stopped = registry_->fold(job, {stop_event("success")}, false, 0);
    const LogVerdict job_verdict = RunRegistry::log_verdict(job, stopped, false);
    EXPECT_TRUE(job_verdict.ask_slurm_now);
    EXPECT_FALSE(job_verdict.state.has_value());
}

TEST_F(RunRegistryTest, AnotherProcesssRunTakesItsRowsStateAndNothingIsWrittenBack) {
    TrackedRun& theirs = stored_run(RunState::kRunning);
    theirs.state_from_store = true;
    TrackedRun& ours = stored_run(RunState::kRunning);
    EXPECT_TRUE(registry_->read_owners_rows().at(0).key == theirs.key);
    EXPECT_FALSE(registry_->read_owners_rows().at(0).changed);  // the row says what the run says
    // That process stores the end; the other row changes under us too, but it is ours to say.
    ASSERT_TRUE(real_->set_state(theirs.store_id, RunState::kCompleted, "", "", StateWrite::kAlways).ok());
    ASSERT_TRUE(real_->set_state(ours.store_id, RunState::kFailed, "", "", StateWrite::kAlways).ok());
    const std::vector<OwnersWord> words = registry_->read_owners_rows();
    ASSERT_EQ(words.size(), 1u);
    EXPECT_EQ(words[0].key, theirs.key);
    EXPECT_TRUE(words[0].changed);
    EXPECT_TRUE(words[0].ended);
    EXPECT_EQ(theirs.state, RunState::kCompleted);
    EXPECT_EQ(ours.state, RunState::kRunning);
    EXPECT_TRUE(store_->writes.empty());
}

TEST_F(RunRegistryTest, ARunWhoseOwnerDiedUntoldIsTakenOverAtTheSecondCheckAndStored) {
    Result<ChildProcess> gone =
        ChildProcess::start(ProcessSpec{"/bin/sh", {"-c", "exit 0"}, {}, {}, {}, false});
    ASSERT_TRUE(gone.ok()) << gone.error();
    ASSERT_TRUE(gone->wait_for(std::chrono::seconds(10)).has_value());
    StoredRun row;
    row.name = "elsewhere";
    row.cluster = kLocalCluster;
    row.job_id = std::to_string(gone->pid());
    row.state = RunState::kRunning;
    const Result<int64_t> id = real_->add(row);
    ASSERT_TRUE(id.ok()) << id.error();
    TrackedRun& run = registry_->add(RunKind::kLogFile, row.name, RunState::kRunning);
    run.store_id = *id;
    run.state_from_store = true;
    run.cancellable = true;
    run.metrics.add(stop_event("success"));  // its log's run_stop says how it ended

    EXPECT_TRUE(registry_->take_over_orphans().empty());  // its owner stores an end within a poll
    const std::vector<RunChange> taken = registry_->take_over_orphans();
    ASSERT_EQ(taken.size(), 1u);
    EXPECT_EQ(taken[0].key, run.key);
    EXPECT_TRUE(taken[0].change.stored);
    EXPECT_FALSE(run.state_from_store);
    EXPECT_FALSE(run.cancellable);
    EXPECT_EQ(run.state, RunState::kCompleted);
    EXPECT_EQ(stored_state(run), RunState::kCompleted);
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"set_state completed"}));
    EXPECT_TRUE(registry_->take_over_orphans().empty());  // once
}

remote::JobInfo slurm_says(const char* state, const char* nodes = "") {
    remote::JobInfo info;
    info.job_id = "12";
    info.state = state;
    info.node_list = nodes;
    return info;
}

TEST_F(RunRegistryTest, SlurmsAnswerIsTheJobsStateAndAnEndCountsOnlyOnceItSettled) {
    TrackedRun& run = stored_run(RunState::kPending);
    run.job_id = "12";
    run.profile = "hpc";
    run.cancellable = true;
    TrackedRun& elsewhere = stored_run(RunState::kPending);
    elsewhere.job_id = "12";
    elsewhere.profile = "other-cluster";  // the same job id on another cluster is another job
    TrackedRun& other_job = stored_run(RunState::kPending);
    other_job.job_id = "13";
    other_job.profile = "hpc";
    TrackedRun& a_log = registry_->add(RunKind::kClusterLog, "slurm-12.out @ hpc", RunState::kFollowing);
    a_log.job_id = "12";  // a log opened by hand is no job's run
    a_log.profile = "hpc";
    const auto t0 = JobWatch::Clock::now();
    using std::chrono::seconds;

    std::vector<JobAnswerForRun> answers =
        registry_->job_answered("hpc", "12", slurm_says("RUNNING", "node01"), "", t0);
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_EQ(answers[0].key, run.key);
    EXPECT_TRUE(answers[0].change.stored);
    EXPECT_EQ(run.state, RunState::kRunning);
    EXPECT_EQ(run.state_detail, "node01");
    EXPECT_EQ(history_->run(run.store_id)->slurm_state, "RUNNING");
    EXPECT_EQ(elsewhere.state, RunState::kPending);
    EXPECT_EQ(other_job.state, RunState::kPending);
    EXPECT_EQ(a_log.state, RunState::kFollowing);

    // Ended-looking (a requeue may follow): not the run's end yet; asked again later.
    answers = registry_->job_answered("hpc", "12", slurm_says("FAILED"), "", t0 + seconds(1));
    EXPECT_TRUE(answers[0].settling);
    EXPECT_FALSE(answers[0].ended);
    EXPECT_EQ(run.state, RunState::kRunning);
    // ... and it was: live again, followed on.
    answers = registry_->job_answered("hpc", "12", slurm_says("PENDING"), "", t0 + seconds(2));
    EXPECT_TRUE(answers[0].requeued);
    EXPECT_EQ(run.state, RunState::kPending);
    EXPECT_TRUE(run.cancellable);

    // An end said over two polls 5 s apart is the run's end, with one end alert.
    (void)registry_->job_answered("hpc", "12", slurm_says("COMPLETED"), "", t0 + seconds(3));
    answers = registry_->job_answered("hpc", "12", slurm_says("COMPLETED"), "", t0 + seconds(9));
    EXPECT_TRUE(answers[0].ended);
    EXPECT_TRUE(answers[0].end_alert);
    EXPECT_EQ(run.state, RunState::kCompleted);
    EXPECT_FALSE(run.cancellable);
    EXPECT_EQ(stored_state(run), RunState::kCompleted);
    EXPECT_EQ(answers[0].end, RunState::kCompleted);
    // A late answer neither reopens it nor ends it twice, nor waits to end it again.
    answers = registry_->job_answered("hpc", "12", slurm_says("RUNNING"), "", t0 + seconds(10));
    EXPECT_FALSE(answers[0].ended);
    EXPECT_FALSE(answers[0].change.changed);
    EXPECT_EQ(run.state, RunState::kCompleted);
    answers = registry_->job_answered("hpc", "12", slurm_says("COMPLETED"), "", t0 + seconds(20));
    EXPECT_FALSE(answers[0].ended);
    EXPECT_FALSE(answers[0].end_alert);
    EXPECT_FALSE(answers[0].change.changed);
    answers = registry_->job_answered("hpc", "12", slurm_says("FAILED"), "", t0 + seconds(21));
    EXPECT_FALSE(answers[0].settling);
    EXPECT_FALSE(answers[0].ended);
    // Its log's run_stop, read after Slurm's end, gives no second end alert.
    run.live = true;
    EXPECT_TRUE(registry_->fold(run, {stop_event("success")}, false, 0).alerts.empty());
}

TEST_F(RunRegistryTest, AFailedQuestionIsSaidOncePerErrorAndTheLogsEndAlertIsTheOnlyOne) {
    TrackedRun& run = stored_run(RunState::kRunning);
    run.job_id = "12";
    run.profile = "hpc";
    run.live = true;
    const auto t0 = JobWatch::Clock::now();
    EXPECT_TRUE(registry_->job_answered("hpc", "12", std::nullopt, "connection lost", t0).at(0).failed_anew);
    EXPECT_FALSE(registry_->job_answered("hpc", "12", std::nullopt, "connection lost", t0).at(0).failed_anew);
    EXPECT_TRUE(registry_->job_answered("hpc", "12", std::nullopt, "timed out", t0).at(0).failed_anew);
    EXPECT_EQ(run.state, RunState::kRunning);  // a failed question says nothing of the job
    (void)registry_->job_answered("hpc", "12", slurm_says("RUNNING"), "", t0);
    EXPECT_TRUE(registry_->job_answered("hpc", "12", std::nullopt, "timed out", t0).at(0).failed_anew);

    // The log's run_stop gave the end alert already: Slurm's end gives none.
    (void)registry_->fold(run, {stop_event("success")}, false, 0);
    using std::chrono::seconds;
    (void)registry_->job_answered("hpc", "12", slurm_says("COMPLETED"), "", t0 + seconds(1));
    const std::vector<JobAnswerForRun> end =
        registry_->job_answered("hpc", "12", slurm_says("COMPLETED"), "", t0 + seconds(7));
    EXPECT_TRUE(end.at(0).ended);
    EXPECT_FALSE(end.at(0).end_alert);
}

TEST_F(RunRegistryTest, ARemovedProfilesRunsAreNoLongerFollowedAndASubmissionUnderWayIsUnknown) {
    TrackedRun& submitting = stored_run(RunState::kSubmitting);
    submitting.profile = "hpc";
    submitting.submit_request = 3;
    submitting.follow_id = 0;
    TrackedRun& running = stored_run(RunState::kRunning);
    running.profile = "hpc";
    running.follow_id = 5;
    running.cancellable = true;
    TrackedRun& other = stored_run(RunState::kRunning);
    other.profile = "other";
    other.follow_id = 6;
    TrackedRun& ended = stored_run(RunState::kCompleted);
    ended.profile = "hpc";
    TrackedRun& local_file = registry_->add(RunKind::kLogFile, "mllog.txt", RunState::kRunning);
    local_file.profile = "hpc";  // not a cluster's run, whatever its profile says
    local_file.follow_id = 8;

    // Replaced (an edited profile): only the follows went; the runs are followed again over the new session.
    EXPECT_TRUE(registry_->cluster_gone("hpc", false).empty());
    EXPECT_EQ(running.follow_id, 0);
    EXPECT_EQ(submitting.submit_request, 3);
    EXPECT_EQ(other.follow_id, 6);

    const std::vector<RunChange> changed = registry_->cluster_gone("hpc", true);
    ASSERT_EQ(changed.size(), 2u);
    EXPECT_EQ(submitting.state, RunState::kUnknown);
    EXPECT_EQ(submitting.state_detail, kProfileRemovedDuringSubmitDetail);
    EXPECT_EQ(stored_state(submitting), RunState::kUnknown);
    EXPECT_EQ(submitting.submit_request, 0);
    EXPECT_EQ(running.state, RunState::kRunning);  // the last state known, not stored as anything else
    EXPECT_EQ(running.state_detail, kProfileRemovedNotFollowedDetail);
    EXPECT_FALSE(running.cancellable);
    EXPECT_FALSE(changed[1].change.stored);
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"set_state unknown"}));
    EXPECT_EQ(other.follow_id, 6);
    EXPECT_EQ(ended.state_detail, "");
    EXPECT_EQ(local_file.follow_id, 8);
    EXPECT_EQ(local_file.state_detail, "");
}

}  // namespace
}  // namespace slipway::app
