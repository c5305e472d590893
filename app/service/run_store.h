// The run store as the run service reads and writes it: one row per run, written once per state change.
// Qt-free, so the service, the CLI and their tests hold it without Qt; history/history_run_store.h is its
// implementation over the SQLite run history that the app and the CLI share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "contract/status.h"
#include "core/run_metrics.h"
#include "core/run_state.h"
#include "remote/deploy/run_record.h"

namespace slipway::app {

// The cluster column of a run on this machine (the "This computer" profile), and of a log file opened by
// hand on this machine.
inline constexpr const char* kLocalCluster = "This computer";
inline constexpr const char* kOpenedLogCluster = "log file";

// What a run is, which says what follows it and what can end it.
enum class RunKind {
    kLocal,       // slipway-engine on This computer
    kLogFile,     // a log file on this machine, opened by hand
    kClusterJob,  // a Slurm job submitted to a cluster
    kClusterLog,  // a log on a cluster opened by hand (no job)
};

// A run as the store holds it: the one row type of the run history, which the service, the CLI and the
// app's pages all read (the pages turn its texts into QString where they show them).
struct StoredRun {
    int64_t id = 0;
    std::string run_id;  // Slipway's run id (make_run_id); empty for rows older than schema 3
    std::string name;
    std::string cluster;  // profile name: kLocalCluster for runs on this machine, kOpenedLogCluster for a log
    std::string job_id;   // Slurm job id; empty until sbatch answered
    std::string slurm_cluster;  // sbatch's ";cluster" part, if any
    std::string remote_dir;     // a submitted run's folder on the login node
    std::string log_path;       // the followed log (a local path, or a path on the cluster)
    uint64_t log_offset = 0;    // bytes of the log folded into the stored points
    RunState state = RunState::kUnknown;
    std::string slurm_state;   // Slurm's last word ("NODE_FAIL"); empty for runs Slurm does not run
    std::string state_detail;  // what the state alone does not say: node list, exit code, a submit error
    std::string config_json;   // the run config exactly as submitted
    // Milliseconds since the epoch; 0 when not known (a run that has not started or ended, an end nobody
    // saw).
    int64_t created_ms = 0;
    int64_t started_ms = 0;
    int64_t finished_ms = 0;
    int restarts = 0;  // how often a requeued job resumed (its log's resume events, kept with its facts)

    // The record follow and fetch work from. Rows the app wrote before schema 3 have no remote folder and
    // no run id: their log's folder and their row number stand in.
    remote::RunRecord remote_record() const;
    // From its cluster column, run id and job (a row with no cluster, which nothing writes, is read as a log
    // file).
    RunKind kind() const;
};

// The wall clock in milliseconds since the epoch, as rows keep their times.
int64_t now_ms();

class RunStore {
public:
    virtual ~RunStore() = default;

    // Where the store lives, for messages ("no cluster runs in ...").
    virtual std::string location() const = 0;
    // A new row (its id is ignored); the new id.
    [[nodiscard]] virtual Result<int64_t> add(const StoredRun& run) = 0;
    // sbatch's answer, in one write: the row of `record.run_id` gets the job id, remote folder, log and
    // `run_json` (the config as it runs there) and turns pending (a faster poller's state is kept).
    [[nodiscard]] virtual Status record_job(const remote::RunRecord& record, const std::string& run_json) = 0;
    // The run's state; an ended state stamps the finished time. `slurm_state` empty keeps the stored one.
    [[nodiscard]] virtual Status set_state(int64_t id, RunState state, const std::string& detail,
                                           const std::string& slurm_state, StateWrite mode) = 0;
    // An end nobody saw (the process that ran or followed the run is gone): the ended state, unless the row
    // ended meanwhile, and no finished time, since nobody knows when it ended.
    [[nodiscard]] virtual Status end_unseen(int64_t id, RunState state, const std::string& detail) = 0;
    // The row of a Slipway run id, else of a row number; an error naming the store when there is none.
    [[nodiscard]] virtual Result<StoredRun> find(const std::string& run_id_or_row) const = 0;
    // The row with this id, whatever it holds; an error when there is none.
    [[nodiscard]] virtual Result<StoredRun> row(int64_t id) const = 0;
    // Runs submitted to clusters, oldest first.
    [[nodiscard]] virtual Result<std::vector<StoredRun>> cluster_runs() const = 0;

    // What the app's run board (run_board.h) reads and writes besides states.
    [[nodiscard]] virtual Result<std::vector<StoredRun>> runs() const = 0;   // every row, newest first
    [[nodiscard]] virtual Result<RunMetrics> metrics(int64_t id) const = 0;  // a row's stored curves
    [[nodiscard]] virtual Status remove(int64_t id) = 0;
    // Changes whenever another connection (the CLI, another window) commits.
    [[nodiscard]] virtual Result<int64_t> version() const = 0;
    // The row of a log file opened by hand here (by its canonical path); 0 when there is none.
    [[nodiscard]] virtual Result<int64_t> find_opened_log(const std::string& path) const = 0;
    // That row with its points and offset dropped (the file is read again), or a new one.
    [[nodiscard]] virtual Result<int64_t> record_opened_log(const std::string& path,
                                                            const std::string& name) = 0;
    // The row of a log on cluster `profile` at `path` that no job of ours wrote; 0 when there is none.
    [[nodiscard]] virtual Result<int64_t> find_log_run(const std::string& profile,
                                                       const std::string& path) const = 0;
    // That row kept with its points and offset (following resumes where it stopped), or a new one.
    [[nodiscard]] virtual Result<int64_t> record_remote_log(const std::string& profile,
                                                            const std::string& path,
                                                            const std::string& name) = 0;
    // A log read to its end: its state from run_stop, its start and end from run_start and run_stop.
    [[nodiscard]] virtual Status finish_opened_log(int64_t id, const RunMetrics& metrics) = 0;
};

// A store that keeps nothing (an app that could not open its run history): writes succeed, rows have id 0,
// and a row asked for by id is not there.
class NoRunStore : public RunStore {
public:
    std::string location() const override { return "no run history"; }
    [[nodiscard]] Result<int64_t> add(const StoredRun&) override { return int64_t{0}; }
    [[nodiscard]] Status record_job(const remote::RunRecord&, const std::string&) override {
        return Status::Ok();
    }
    [[nodiscard]] Status set_state(int64_t, RunState, const std::string&, const std::string&,
                                   StateWrite) override {
        return Status::Ok();
    }
    [[nodiscard]] Status end_unseen(int64_t, RunState, const std::string&) override { return Status::Ok(); }
    [[nodiscard]] Result<StoredRun> find(const std::string& run_id_or_row) const override {
        return Status::Error(StatusCode::kNotFound, "no run " + run_id_or_row + ": there is no run history");
    }
    [[nodiscard]] Result<StoredRun> row(int64_t id) const override { return find(std::to_string(id)); }
    [[nodiscard]] Result<std::vector<StoredRun>> cluster_runs() const override {
        return std::vector<StoredRun>{};
    }
    [[nodiscard]] Result<std::vector<StoredRun>> runs() const override { return std::vector<StoredRun>{}; }
    [[nodiscard]] Result<RunMetrics> metrics(int64_t id) const override { return row(id).status(); }
    [[nodiscard]] Status remove(int64_t id) override { return row(id).status(); }
    [[nodiscard]] Result<int64_t> version() const override { return int64_t{0}; }
    [[nodiscard]] Result<int64_t> find_opened_log(const std::string&) const override { return int64_t{0}; }
    [[nodiscard]] Result<int64_t> record_opened_log(const std::string&, const std::string&) override {
        return int64_t{0};
    }
    [[nodiscard]] Result<int64_t> find_log_run(const std::string&, const std::string&) const override {
        return int64_t{0};
    }
    [[nodiscard]] Result<int64_t> record_remote_log(const std::string&, const std::string&,
                                                    const std::string&) override {
        return int64_t{0};
    }
    [[nodiscard]] Status finish_opened_log(int64_t, const RunMetrics&) override { return Status::Ok(); }
};

// submit_run's sink over a store, best effort: once sbatch has the job, a store that cannot be written (a
// full disk, a lock held too long) must not turn the submission into a failure; the job runs either way.
// The problem is kept for the caller to report.
class StoreRunSink : public remote::RunRecordSink {
public:
    explicit StoreRunSink(RunStore& store) : store_(store) {}
    [[nodiscard]] Status save(const remote::RunRecord& record, const std::string& run_json) const override {
        const Status s = store_.record_job(record, run_json);
        problem_ = s.ok() ? std::string() : s.message();
        return Status::Ok();
    }
    // Why the last save could not write the store; empty when it did.
    const std::string& problem() const { return problem_; }

private:
    RunStore& store_;
    mutable std::string problem_;
};

}  // namespace slipway::app
