// Every run the app shows while it is open (a run on This computer, a Slurm job, a log file, a log on a
// cluster) and its whole life: start and submit, state changes, following its log into its curves and its
// row, alerts, stalls, Slurm's answers, cancel, release, another process's runs. Qt-free: it talks to the
// world through run_board_seams.h (file follows, cluster links, the points' writer, a timer, the events it
// tells), so the GUI's RunTracker is those seams over Qt plus signals, and tests drive it with fakes.
// - the runs are a RunRegistry (run_registry.h), whose set_state is the one rule by which a state changes
//   and a row is written;
// - runs on This computer are LocalJobs (local_jobs.h: each row written once per state change by the job);
// - what a log says of its run (log_state.h), how a stored run is followed again (follow_again.h), a lost
//   submission (lost_submission.h) and the startup sweep (stale_runs.h) are the service's rules;
// - Slurm: a cluster's session submits through SlurmExecutor (its worker writes the row), JobsWatch asks
//   every job once per poll (one question per cluster), the registry judges the answers. The cluster half
//   is run_board_cluster.cpp.
// Its ticks (stalls, local engines, Slurm polls, the store's version) are called by its owner's timers.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "core/run_metrics.h"
#include "core/run_state.h"
#include "remote/deploy/job_end_rule.h"
#include "remote/deploy/job_nodes.h"
#include "service/job_watch.h"
#include "service/local_executor.h"
#include "service/local_jobs.h"
#include "service/run_board_seams.h"
#include "service/run_registry.h"
#include "service/run_store.h"

namespace slipway::app {

// A cluster's answer to a submission. Its worker wrote the run's row already (store_id; 0 without a store).
struct SubmissionAnswer {
    bool ok = false;
    std::string error;  // why it failed
    int64_t store_id = 0;
    std::string job_id;
    std::string remote_dir;
    std::string log_path;
    std::string store_problem;  // why the store could not record it; empty when it did
};

class RunBoard {
public:
    struct Options {
        std::string resource_root;   // resolves a run config's relative inputs
        std::string local_runs_dir;  // where runs on This computer get their folder
        std::string engine_binary;   // slipway-engine, as the file system names it
        double stall_factor = 5.0;
        int64_t stall_min_ms = 60'000;
        int after_run_stop_ms = 1500;  // ask Slurm this soon after the log's run_stop
        int local_cancel_grace_ms =
            static_cast<int>(kStopGrace.count());  // a cancelled engine's time to save
        // When an ended-looking Slurm state is the run's end (a requeued job looks ended for a moment).
        remote::JobEndRule::Options end_rule;
    };
    // None owned. `store` null: nothing is stored (then `points` is null too); `clusters` null: no clusters.
    struct Seams {
        RunStore* store = nullptr;
        PointWriter* points = nullptr;
        LogFollows* files = nullptr;
        ClusterLinks* clusters = nullptr;
        BoardTimer* timer = nullptr;
        RunEvents* events = nullptr;
    };

    RunBoard(Options options, Seams seams);
    // close().
    ~RunBoard();
    RunBoard(const RunBoard&) = delete;
    RunBoard& operator=(const RunBoard&) = delete;

    // Starts slipway-engine on `config` here. `flags` are extra engine flags (tests shorten runs).
    [[nodiscard]] Result<int> submit_local(const RunConfig& config,
                                           const std::vector<std::string>& flags = {});
    // Deploys and sbatches `config` on a cluster profile; its log is followed and its state polled.
    [[nodiscard]] Result<int> submit_cluster(const RunConfig& config, const std::string& profile);
    // Reads a whole log file once (stored as a run, one per file; state from its run_stop). Fails at once
    // when the file is missing.
    [[nodiscard]] Result<int> open_log(const std::string& path);
    // Follows a log file that is being written (the demo's mllog.txt started from a script).
    int follow_log(const std::string& path, const std::string& name);
    // Follows a log on a cluster opened by hand; stored once per file and resumed from its offset.
    [[nodiscard]] Result<int> open_cluster_log(const std::string& profile, const std::string& path);
    // Curves that are not stored anywhere (an import, a benchmark), shown as a finished run.
    int show_curves(const std::string& name, RunMetrics metrics, RunState state);
    // A stored run's curves, not live. A run shown already is returned as it is.
    [[nodiscard]] Result<int> show_stored(int64_t store_id);
    // Follows a stored run's log again from its stored offset (and asks Slurm about its job).
    [[nodiscard]] Result<int> resume(int64_t store_id);
    // SIGTERM / scancel; the result arrives as a change (and a notice when scancel fails).
    [[nodiscard]] Status cancel(int key);
    // No longer shown: its follow stops, its writer queue is closed, the entry goes.
    void release(int key);
    // The app is closing: engines still training are stopped (their rows say so), follows stopped, writer
    // queues closed; the runs stay readable. Once; the destructor calls it too.
    void close();
    // Deletes a stored run (a shown one is released first).
    [[nodiscard]] Status delete_stored(int64_t store_id);
    // The startup sweep: a local run left "running" died with the last session (interrupted); a cluster log
    // left "following" is no longer followed (incomplete).
    void recover_after_restart();

    void set_target(int key, std::optional<double> target, bool higher_is_better);
    // A live run stalls after `factor` x its median step interval without a new step, never sooner than
    // `min_ms`. Applies to runs added afterwards.
    void set_stall_policy(double factor, int64_t min_ms);

    const TrackedRun* run(int key) const { return registry_.find(key); }
    int run_for_store(int64_t store_id) const { return registry_.run_for_store(store_id); }
    // A run still waiting for its submission's answer has this Slipway run id.
    bool submitting_run_id(const std::string& run_id) const { return registry_.submitting_run_id(run_id); }
    std::vector<int> keys() const { return registry_.keys(); }
    int local_runs_active() const { return local_.size(); }

    // Ticks, from the owner's timers.
    void check_stalls();  // and another process's runs whose owner died untold
    void poll_local();    // every local engine's exit (the run service stores it)
    // Every live job's Slurm state, one question per cluster: the shown runs' jobs, and the store's live
    // jobs that no shown run owns (submitted from the CLI) on a cluster whose connection is up already
    // (never a new SSH prompt); their answers are stored.
    void poll_jobs();
    void watch_store();  // rows another process wrote: the runs it runs here say how they go

    // What the seams answer.
    void file_batch(const LogBatch& batch);
    void cluster_batch(const std::string& profile, const LogBatch& batch);
    void submitted(const std::string& profile, int request, const SubmissionAnswer& answer);
    // A submission still under way says how it goes ("building the engine in job 12"): the run's detail.
    void submit_progress(const std::string& profile, int request, const std::string& line);
    // Slurm's word on a job (`ok` false: the question failed, `detail` says why); `detail` is the node list
    // and reason as the session wrote them.
    void job_state(const std::string& profile, bool ok, const std::string& job, const std::string& word,
                   const std::string& detail);
    void job_nodes(const std::string& profile, const std::string& job,
                   const std::vector<remote::NodeState>& nodes);
    void cancelled(const std::string& profile, int request, bool ok, const std::string& answer);
    void connection(const std::string& profile, bool up, const std::string& why);
    // The profile's session went (its follows with it): `replaced` by a new one (the runs follow on there
    // from where they stopped), else the profile was removed.
    void cluster_gone(const std::string& profile, bool replaced);

private:
    // The cluster run whose submission `request` of `profile` is; null when none (released meanwhile).
    TrackedRun* submitting(const std::string& profile, int request);
    // A log file on this machine, followed from its start.
    TrackedRun& add_log_file(const std::string& name, RunState state, const std::string& path);
    // A stored run as a shown one (not live yet).
    TrackedRun& add_stored(const StoredRun& record, RunMetrics metrics, RunKind source);
    void set_state(TrackedRun& run, RunState state, const std::string& detail = {},
                   const std::string& slurm_state = {}, StateSource source = StateSource::kTracker);
    // Tells a state change (and a row that could not be written).
    void report(int key, const StateChange& change);
    void apply(TrackedRun& run, const LogBatch& batch);
    void close_store_queue(int64_t store_id);
    void alert(int key, RunAlertKind kind, Notice notice);

    // The cluster half (run_board_cluster.cpp).
    // Whether a live cluster run's job is to be asked about.
    static bool has_live_job(const TrackedRun& run);
    void ask_state(const TrackedRun& run);
    void refollow(const std::string& profile);
    void adopt_lost_submission(TrackedRun& run);

    Options options_;
    Seams seams_;
    RunEvents& events_;
    // Every job asked about: the shown runs' and the store's others (another process submitted them).
    JobsWatch jobs_;
    // The runs shown, by key, and the state rule (writes rows through the store).
    RunRegistry registry_;
    std::unique_ptr<RunStore> no_store_;  // the executor's store when there is no run history
    std::unique_ptr<LocalExecutor> local_executor_;
    // key -> its engine, until it exits (also after the run was released: its end is still stored).
    LocalJobs local_;
    int64_t store_version_ = -1;
    bool closed_ = false;
    struct ClusterLink {
        int up = -1;                       // -1: not known yet, else 0 / 1
        std::map<int, int> cancel_to_key;  // cancel request -> run key
    };
    std::map<std::string, ClusterLink> links_;  // by profile
};

}  // namespace slipway::app
