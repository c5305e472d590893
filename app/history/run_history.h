// The run history: an SQLite database (the sqlite3 C API; no Qt) in the XDG data folder holding every run
// (name, cluster, job id, state, times, the full run config JSON, the followed log and how far it was read)
// and its metric points, so plots of old runs come back after a restart and a follower resumes where it
// stopped. Points and the new log offset are written in one transaction: after a crash either both are
// there or neither, so resuming never loses or repeats a point. The file is private to its user (0600,
// its folder 0700 when we create it) and carries its schema version (PRAGMA user_version): older files
// are migrated step by step, newer ones refused. The app and the `slipway` CLI share one file (WAL, busy
// timeout): a run submitted from either is listed, followed and fetched from both.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contract/status.h"
#include "core/run_metrics.h"
#include "core/run_state.h"
#include "history/sqlite_connection.h"
#include "remote/deploy/run_record.h"
#include "service/run_store.h"

namespace slipway::app {

// The run-level facts stored with each append (times, status, target, total steps): what load_metrics
// gives back beside the points. RunMetrics without its points, so a queued batch does not copy them.
struct RunFacts {
    std::string encoded;
    static RunFacts of(const RunMetrics& metrics);
};

class HistoryWriter;

// How open() treats what older Slipways left behind.
struct OpenOptions {
    // The JSON run records of the CLI before schema 3 ($XDG_DATA_HOME/slipway/runs): imported once, when
    // the file reaches schema 3, then the folder is renamed runs.imported. Empty: nothing is imported.
    std::string legacy_records_dir;
};

class RunHistory {
public:
    // The schema this build writes; open() migrates older files to it and refuses newer ones.
    static int schema_version();
    // How long a write waits for another connection's lock before failing (SQLite's busy timeout).
    static constexpr int kBusyTimeoutMs = 5000;

    // Opens (creating if needed) the database at `path`; its folder is created too.
    [[nodiscard]] static Result<std::unique_ptr<RunHistory>> open(const std::string& path,
                                                                  const OpenOptions& options = {});
    // The user's history with the legacy JSON records imported (what the app and the CLI open).
    [[nodiscard]] static Result<std::unique_ptr<RunHistory>> open_default();
    // <XDG data home>/slipway/history.sqlite
    static std::string default_path();

    // Finishes the writer's queue (a last try) before the connection closes.
    ~RunHistory();
    RunHistory(const RunHistory&) = delete;
    RunHistory& operator=(const RunHistory&) = delete;

    // Inserts `run` (its id is ignored; created_ms 0 is now) and returns the new id.
    [[nodiscard]] Result<int64_t> add_run(const StoredRun& run);
    [[nodiscard]] Status update_run(const StoredRun& run);  // every column but the points and offset
    // `slurm_state` empty keeps the stored one; `finished_ms` 0 keeps the stored time.
    [[nodiscard]] Status set_state(int64_t run_id, RunState state, const std::string& detail = {},
                                   const std::string& slurm_state = {}, int64_t finished_ms = 0,
                                   StateWrite mode = StateWrite::kAlways);
    [[nodiscard]] Status remove_run(int64_t run_id);

    // A submitted cluster run, recorded when sbatch answers, in one write: the row with its run id gets the
    // job id, remote folder, log and `run_json` (the config as it runs there, when given) and turns pending,
    // or a new row is made (an import, a pipeline step). Returns the row's id.
    [[nodiscard]] Result<int64_t> record_submission(const remote::RunRecord& record,
                                                    const std::string& run_json = {});
    // The row of a Slipway run id, else of a numeric row id; an error naming the store when there is none.
    [[nodiscard]] Result<int64_t> find_run(const std::string& run_id_or_id) const;
    // Runs submitted to clusters (a job id or a Slipway run id on a profile: a failed submission too),
    // oldest first: what `slipway status` lists.
    [[nodiscard]] Result<std::vector<StoredRun>> cluster_runs() const;
    // Changes when another connection (the CLI, a worker thread, another app) commits to the file.
    [[nodiscard]] Result<int64_t> data_version() const;

    // The run of a log file opened before (cluster kOpenedLogCluster, the same path); 0 when there is none.
    [[nodiscard]] Result<int64_t> find_opened_log(const std::string& path) const;
    // That run with its points and offset dropped, so the file is read again; a new run when there is
    // none. Opening a file twice never makes two runs.
    [[nodiscard]] Result<int64_t> record_opened_log(const std::string& path, const std::string& name);
    // The run of a log on cluster `cluster` (or kOpenedLogCluster) at `path` that no job of ours wrote;
    // 0 when there is none.
    [[nodiscard]] Result<int64_t> find_log_run(const std::string& cluster, const std::string& path) const;
    // A log on a cluster opened by hand (File > Open log on a cluster...): its run, kept with its points
    // and offset so following resumes where it stopped, or a new one; state kFollowing.
    [[nodiscard]] Result<int64_t> record_remote_log(const std::string& profile, const std::string& path,
                                                    const std::string& name);
    // Once the file is read: its state from run_stop (its status as the detail), started and finished from
    // run_start and run_stop.
    [[nodiscard]] Status finish_opened_log(int64_t run_id, const RunMetrics& metrics);

    // Appends points and moves the log offset, atomically; `metrics` (the run's curves so far) gives
    // the run-level facts stored with them (target, total steps, status, start time). Fails, storing
    // nothing, when SQLite cannot write: writer() queues and retries instead.
    [[nodiscard]] Status append(int64_t run_id, const std::vector<MetricPointRow>& points,
                                const RunMetrics& metrics, uint64_t log_offset);
    [[nodiscard]] Status append(int64_t run_id, const std::vector<MetricPointRow>& points,
                                const RunFacts& facts, uint64_t log_offset);
    // Drops every point and sets the offset to 0 (the log was rewritten); what the writer queued for the
    // run goes too.
    [[nodiscard]] Status reset_points(int64_t run_id);

    // The queue live runs write through (the monitor's): a failed write keeps its points and retries.
    // A run written through it must not also be written with append() directly.
    HistoryWriter& writer() { return *writer_; }

    [[nodiscard]] Result<std::vector<StoredRun>> runs() const;  // newest first
    [[nodiscard]] Result<StoredRun> run(int64_t run_id) const;
    [[nodiscard]] Result<RunMetrics> load_metrics(int64_t run_id) const;
    [[nodiscard]] Result<int64_t> point_count(int64_t run_id) const;
    // At most `max_points` values of one metric, evenly spaced over the run, in log order, with the last
    // point always kept (the Runs page's small curves). SQLite picks them: a long run is not read whole.
    [[nodiscard]] Result<std::vector<double>> sampled_values(int64_t run_id, Metric metric,
                                                             int max_points) const;

    const std::string& path() const { return path_; }
    // What open() changed that the user may want to know (permissions tightened, schema migrated).
    const std::vector<std::string>& open_notes() const { return open_notes_; }
    [[nodiscard]] Status set_busy_timeout(int ms);
    // The first column of `sql`'s first row on this history's own connection, for tests that inject faults
    // into it (PRAGMA max_page_count: a full disk).
    [[nodiscard]] Result<int64_t> pragma(const std::string& sql);

private:
    friend class HistoryWriter;

    RunHistory(std::unique_ptr<SqliteConnection> db, std::string path);
    [[nodiscard]] Status migrate(const OpenOptions& options, std::vector<std::string>& notes);
    [[nodiscard]] Status reset_stored_points(int64_t run_id);

    std::unique_ptr<SqliteConnection> db_;
    std::string path_;
    std::vector<std::string> open_notes_;
    std::unique_ptr<HistoryWriter> writer_;
};

}  // namespace slipway::app
