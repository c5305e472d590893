// A RunStore for the run service's tests: the real store behind it, with every write written down, and one
// kind of write refused on request (as a full disk would). Tests check "one write per state change" with it.
#pragma once

#include <string>
#include <vector>

#include "service/run_store.h"

namespace slipway::app {

// The real store, with every write written down; `refuse` makes one kind of write fail as a full disk would.
class RecordingStore : public RunStore {
public:
    explicit RecordingStore(RunStore& real) : real_(real) {}
    std::vector<std::string> writes;
    std::string refuse;  // "add", "record_job", "set_state" or "end_unseen"
    bool refuse_once = false;

    std::string location() const override { return real_.location(); }
    Result<int64_t> add(const StoredRun& run) override {
        writes.push_back("add " + std::string(to_db_text(run.state)));
        if (refused("add")) return Status::Error("database or disk is full");
        return real_.add(run);
    }
    Status record_job(const remote::RunRecord& record, const std::string& run_json) override {
        writes.push_back("record_job " + record.job_id);
        if (refused("record_job")) return Status::Error("database or disk is full");
        return real_.record_job(record, run_json);
    }
    Status set_state(int64_t id, RunState state, const std::string& detail, const std::string& slurm_state,
                     StateWrite mode) override {
        writes.push_back("set_state " + std::string(to_db_text(state)));
        if (refused("set_state")) return Status::Error("database or disk is full");
        return real_.set_state(id, state, detail, slurm_state, mode);
    }
    Status end_unseen(int64_t id, RunState state, const std::string& detail) override {
        writes.push_back("end_unseen " + std::string(to_db_text(state)));
        if (refused("end_unseen")) return Status::Error("database or disk is full");
        return real_.end_unseen(id, state, detail);
    }
    Result<StoredRun> find(const std::string& run) const override { return real_.find(run); }
    Result<StoredRun> row(int64_t id) const override { return real_.row(id); }
    bool refused(const std::string& kind) {
        if (refuse != kind) return false;
        if (refuse_once) refuse.clear();
        return true;
    }
    Result<std::vector<StoredRun>> cluster_runs() const override { return real_.cluster_runs(); }
    // The board's reads and the rows of opened logs, not written down.
    Result<std::vector<StoredRun>> runs() const override { return real_.runs(); }
    Result<RunMetrics> metrics(int64_t id) const override { return real_.metrics(id); }
    Status remove(int64_t id) override { return real_.remove(id); }
    Result<int64_t> version() const override { return real_.version(); }
    Result<int64_t> find_opened_log(const std::string& path) const override {
        return real_.find_opened_log(path);
    }
    Result<int64_t> record_opened_log(const std::string& path, const std::string& name) override {
        return real_.record_opened_log(path, name);
    }
    Result<int64_t> find_log_run(const std::string& profile, const std::string& path) const override {
        return real_.find_log_run(profile, path);
    }
    Result<int64_t> record_remote_log(const std::string& profile, const std::string& path,
                                      const std::string& name) override {
        return real_.record_remote_log(profile, path, name);
    }
    Status finish_opened_log(int64_t id, const RunMetrics& metrics) override {
        return real_.finish_opened_log(id, metrics);
    }

private:
    RunStore& real_;
};

}  // namespace slipway::app
