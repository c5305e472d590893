// Run ids and the record of a submitted run (run id, cluster, Slurm job id, remote folder, submit time),
// saved through a RunRecordSink the moment sbatch answers: the app and the CLI record runs in their SQLite
// history (app/history/history_run_sink.h); RunRecordStore is the older one-JSON-file-per-run store
// ($XDG_DATA_HOME/slipway/runs/<run-id>.json), kept so those records can be read and imported once. A
// record holds no secrets.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "contract/status.h"

namespace slipway::remote {

// "<name>-YYYYMMDD-HHMMSS-<4 hex>": the run name reduced to [A-Za-z0-9._-] (at most 40 characters), the
// UTC submit time and a random suffix, so ids are unique, sortable by time and safe in any shell or path.
std::string make_run_id(const std::string& run_name, std::time_t now, std::uint32_t random);
std::string make_run_id(const std::string& run_name);  // now, with a random suffix from std::random_device
// Ids as make_run_id writes them; anything else (a path, shell syntax) is refused.
Status check_run_id(const std::string& run_id);

struct RunRecord {
    std::string run_id;
    std::string name;           // the run config's name, as the user wrote it
    std::string cluster;        // profile name
    std::string job_id;         // Slurm job id
    std::string slurm_cluster;  // sbatch's ";cluster" part, if any
    std::string remote_dir;     // absolute folder on the login node
    std::string submitted;      // UTC, ISO 8601
    std::string last_state;     // the state last seen (PENDING, RUNNING, COMPLETED, ...)

    std::string slurm_log() const { return remote_dir + "/slurm-" + job_id + ".out"; }
};

// $XDG_DATA_HOME/slipway/runs (~/.local/share/slipway/runs).
std::string default_runs_dir();

// Where submit_run records a run once Slurm has its job id.
class RunRecordSink {
public:
    virtual ~RunRecordSink() = default;
    // `run_json`: the run config as it runs there (deploy_run's remote_config, JSON); empty for a job that is
    // not a training run (a pipeline's CPU step).
    [[nodiscard]] virtual Status save(const RunRecord& record, const std::string& run_json) const = 0;
};

class RunRecordStore : public RunRecordSink {
public:
    explicit RunRecordStore(std::string dir = default_runs_dir()) : dir_(std::move(dir)) {}
    const std::string& dir() const { return dir_; }

    // The record alone: the run config stays in the run's folder on the cluster.
    [[nodiscard]] Status save(const RunRecord& record) const;
    [[nodiscard]] Status save(const RunRecord& record, const std::string&) const override {
        return save(record);
    }
    Result<RunRecord> load(const std::string& run_id) const;
    // All records, oldest first; an unreadable record is an error naming its file.
    Result<std::vector<RunRecord>> list() const;
    // Every readable record, oldest first, and one problem naming the file for each unreadable one (an
    // import must not stop at one corrupt file).
    struct Scan {
        std::vector<RunRecord> records;
        std::vector<std::string> problems;
        std::string listing_problem;  // the folder itself could not be listed: some records may be missing
    };
    Scan scan() const;

private:
    std::string dir_;
};

std::string utc_timestamp(std::time_t now);  // 2026-11-22T09:01:12Z
// The time utc_timestamp wrote; nullopt for any other text.
std::optional<std::time_t> parse_utc_timestamp(const std::string& text);

}  // namespace slipway::remote
