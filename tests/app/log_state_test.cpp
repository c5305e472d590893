// What a followed run's log says of its state (service/log_state.h), rule by rule: steps again after a stall,
// a pending job whose log moves, a log's run_stop that only the log can report, a job's run_stop that makes
// Slurm's word due, a file read once to its end; and what the log never decides (an engine's run, another
// process's row, a run_stop seen before).
#include <gtest/gtest.h>

#include "service/log_state.h"

namespace slipway::app {
namespace {

LogReading reading(RunKind followed_as, RunState state, bool live = true) {
    LogReading r;
    r.followed_as = followed_as;
    r.state = state;
    r.live = live;
    return r;
}

TEST(LogState, NewStepsAfterAStallOrWhileAJobLooksPendingMeanItRuns) {
    LogReading stalled = reading(RunKind::kLocal, RunState::kStalled);
    EXPECT_FALSE(read_log_state(stalled).state);  // no new step: still stalled
    stalled.new_steps = true;
    EXPECT_EQ(read_log_state(stalled).state, RunState::kRunning);

    LogReading pending = reading(RunKind::kClusterJob, RunState::kPending);
    pending.new_steps = true;
    EXPECT_EQ(read_log_state(pending).state, RunState::kRunning);
    pending.state = RunState::kSubmitting;
    EXPECT_EQ(read_log_state(pending).state, RunState::kRunning);
    pending.stopped = true;  // steps and run_stop in one batch: Slurm says how it ended, not "running"
    EXPECT_FALSE(read_log_state(pending).state);
    LogReading local = reading(RunKind::kLocal, RunState::kPending);
    local.new_steps = true;
    EXPECT_FALSE(read_log_state(local).state);  // only a Slurm job's "pending" is a poll behind its log
}

TEST(LogState, ARunStopEndsARunOnlyItsLogReportsOn) {
    for (RunKind kind : {RunKind::kLogFile, RunKind::kClusterLog}) {
        LogReading followed = reading(kind, RunState::kFollowing);
        followed.stopped = true;
        followed.stop_status = "success";
        LogVerdict verdict = read_log_state(followed);
        EXPECT_EQ(verdict.state, RunState::kCompleted);
        EXPECT_EQ(verdict.detail, "");
        EXPECT_TRUE(verdict.ended_by_log);
        followed.stop_status = "aborted";
        verdict = read_log_state(followed);
        EXPECT_EQ(verdict.state, RunState::kFailed);
        EXPECT_EQ(verdict.detail, "run_stop status aborted");

        followed.stopped_before = true;  // said already
        EXPECT_FALSE(read_log_state(followed).state);
        followed.stopped_before = false;
        followed.state_from_store = true;  // another process's run: its row says how it ended
        EXPECT_FALSE(read_log_state(followed).state);
    }
    LogReading engine = reading(RunKind::kLocal, RunState::kRunning);  // the engine's exit says
    engine.stopped = true;
    engine.stop_status = "aborted";
    EXPECT_FALSE(read_log_state(engine).state);
    EXPECT_FALSE(read_log_state(engine).ended_by_log);
}

TEST(LogState, AJobsRunStopMakesSlurmsWordDueNotItsEnd) {
    LogReading job = reading(RunKind::kClusterJob, RunState::kRunning);
    job.stopped = true;
    job.stop_status = "success";
    const LogVerdict verdict = read_log_state(job);
    EXPECT_TRUE(verdict.ask_slurm_now);
    EXPECT_FALSE(verdict.state);  // a requeued job logs run_stop too: Slurm says whether it ended
    job.state = RunState::kCompleted;
    EXPECT_FALSE(read_log_state(job).ask_slurm_now);
}

TEST(LogState, AFileReadOnceEndsAtItsEndAsItsRunStopSays) {
    LogReading file = reading(RunKind::kLogFile, RunState::kReading, /*live=*/false);
    file.stopped = true;
    file.stop_status = "success";
    EXPECT_FALSE(read_log_state(file).state);  // not at its end yet
    file.read_to_end = true;
    LogVerdict verdict = read_log_state(file);
    EXPECT_EQ(verdict.state, RunState::kCompleted);
    EXPECT_TRUE(verdict.ended_by_log);
    file.stopped = false;
    file.stop_status.clear();
    EXPECT_EQ(read_log_state(file).state, RunState::kIncomplete);  // no run_stop: it did not say
    file.stopped = true;                                           // a run_stop without a status
    EXPECT_EQ(read_log_state(file).state, RunState::kUnknown);
}

}  // namespace
}  // namespace slipway::app
