// The runs the app knows while it is open, by key, and the one rule by which a run's state changes (who may
// say it, what is stored): Qt-free, so the rule is tested without a window. The GUI's RunTracker holds one
// and turns what it reports into signals.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "contract/mllog.h"
#include "core/run_metrics.h"
#include "core/run_state.h"
#include "core/run_watch.h"
#include "remote/deploy/job_end_rule.h"
#include "remote/slurm/slurm_parsers.h"
#include "service/job_watch.h"
#include "service/log_state.h"
#include "service/run_store.h"
#include "service/tracked_run.h"

namespace slipway::app {

// Who says a run's state: the app itself (the log, a submission), a poller (Slurm's answers: an ended run
// is never reopened, a stalled one never called running), or the run service, which stored it already.
enum class StateSource { kTracker, kPoller, kService };

// What one state change did.
struct StateChange {
    bool changed = false;       // the state, its detail or Slurm's word is new
    bool stored = false;        // the run's row was written (or tried)
    std::string store_problem;  // why that write failed; empty when it did not
};

// What one batch of a run's log events did to it.
struct FoldedEvents {
    std::array<size_t, kMetricCount> first_new{};  // per metric, the index of its first new point
    std::vector<MetricPointRow> rows;              // the new points, for the run's row (none when not stored)
    std::vector<RunAlert> alerts;                  // a live run's watch on them: finished, failed, target
    bool new_steps = false;                        // the last step moved on
    bool stopped_before = false;                   // the log had its run_stop before them
};

// A run another process runs here, after its row was read again.
struct OwnersWord {
    int key = 0;
    bool changed = false;  // the run took a new state from the row
    bool ended = false;    // the row says it ended: its log's last lines are to be read
};

// What changed in one run.
struct RunChange {
    int key = 0;
    StateChange change;
};

// What Slurm's answer about a job did to one run that follows it.
struct JobAnswerForRun {
    int key = 0;
    bool failed_anew = false;  // the question failed, and not as it did at the last poll (said once)
    bool requeued = false;     // it looked ended and is live again: followed on
    bool settling = false;  // it looks ended but may be requeued: to be asked again once the word can count
    bool ended = false;     // it ended now: its log is to be read to its end
    RunState end = RunState::kUnknown;  // ... with this state
    bool end_alert = false;             // ... and no end alert was given yet (the log's run_stop gives one)
    StateChange change;
};

// A live run that stalled at a check: it is stalled now, with the alert's text as its detail.
struct Stall {
    int key = 0;
    RunAlert alert;
    StateChange change;
};

class RunRegistry {
public:
    struct Options {
        double stall_factor = 5.0;  // a stall: this many times the median step interval without a step
        int64_t stall_min_ms = 60'000;
        remote::JobEndRule::Options end_rule;
    };
    using Runs = std::map<int, TrackedRun>;

    // `store` (not owned) gets each state the app says of a stored run; null stores nothing.
    RunRegistry(Options options, RunStore* store) : options_(options), store_(store) {}

    // Applies to runs added (or their watches restarted) afterwards.
    void set_stall_policy(double factor, int64_t min_ms);

    // A new run under the next key, with a fresh stall watch and job watch.
    TrackedRun& add(RunKind source, std::string name, RunState state);
    // The stall watch of a run whose log was rewritten (its steps start over).
    void restart_watch(TrackedRun& run) const;
    // Whether there was one.
    bool remove(int key);

    TrackedRun* find(int key);
    const TrackedRun* find(int key) const;
    // The run with this follow, among file follows or session follows as `source` says.
    TrackedRun* find_by_follow(RunKind source, int follow_id);
    // The run shown for this row; 0 when none.
    int run_for_store(int64_t store_id) const;
    // A run still waiting for its submission's answer has this Slipway run id.
    bool submitting_run_id(const std::string& run_id) const;
    std::vector<int> keys() const;
    bool empty() const { return runs_.empty(); }
    Runs::iterator begin() { return runs_.begin(); }
    Runs::iterator end() { return runs_.end(); }
    Runs::const_iterator begin() const { return runs_.begin(); }
    Runs::const_iterator end() const { return runs_.end(); }

    // The only place a run's state changes (cluster_gone alone changes a detail the row never had). A poller
    // never reopens an ended run nor calls a stalled one running; an end takes the cancel away; node states
    // stay only while it runs. The row is written unless the service wrote it already or another process owns
    // it (state_from_store); a poller's write never replaces an end stored meanwhile.
    StateChange set_state(TrackedRun& run, RunState state, const std::string& detail,
                          const std::string& slurm_state = {}, StateSource source = StateSource::kTracker);
    // A batch of the run's log events folded into its curves, in order. A rewritten log (`reset`) starts
    // the curves and the stall watch over, keeping the run's target.
    FoldedEvents fold(TrackedRun& run, const std::vector<MllogEvent>& events, bool reset, int64_t now) const;
    // What the log says of the run's state after `folded` (log_state.h); `read_to_end`: a file read once
    // reached its end.
    static LogVerdict log_verdict(const TrackedRun& run, const FoldedEvents& folded, bool read_to_end);
    // The stored rows of the runs another process runs here (state_from_store), read again: each run takes
    // its row's state, which is not written back.
    std::vector<OwnersWord> read_owners_rows();
    // Those runs whose owner died untold, at the second check in a row: no longer the row's, not
    // cancellable, ended as the log says, and stored.
    std::vector<RunChange> take_over_orphans();
    // Slurm's answer about `job` on `cluster` (`answer` null: the question failed with `error`), judged for
    // each run that follows the job: a live word is its state at once, an ended-looking one only once it is
    // the run's end (job_watch.h: a requeue may follow), with the log's run_stop as the word on a job Slurm
    // forgot. A poller's word: an ended run stays ended.
    std::vector<JobAnswerForRun> job_answered(const std::string& cluster, const std::string& job,
                                              const std::optional<remote::JobInfo>& answer,
                                              const std::string& error, JobWatch::Clock::time_point now);
    // The session of `cluster` went (its follows with it; `removed`: the profile too, else it was
    // replaced). On a removed profile, a submission whose answer died with it is unknown (the store may
    // say more) and a live run is no longer followed nor cancellable. The runs that changed.
    std::vector<RunChange> cluster_gone(const std::string& cluster, bool removed);
    // Live runs without a new step for too long, each turned stalled once.
    std::vector<Stall> check_stalls(int64_t now);

private:
    Options options_;
    RunStore* store_;
    Runs runs_;
    int next_key_ = 1;
};

}  // namespace slipway::app
