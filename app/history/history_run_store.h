// The run service's RunStore over the SQLite run history (RunHistory): the one store the app and the CLI
// share. Its rows are StoredRun both ways; the history's connection belongs to the thread that opened it, so
// each thread that runs the service (the CLI, a ClusterSession's worker) holds its own RunHistory.
#pragma once

#include "history/run_history.h"
#include "service/run_store.h"

namespace slipway::app {

class HistoryRunStore : public RunStore {
public:
    explicit HistoryRunStore(RunHistory& history) : history_(history) {}

    std::string location() const override;
    [[nodiscard]] Result<int64_t> add(const StoredRun& run) override;
    [[nodiscard]] Status record_job(const remote::RunRecord& record, const std::string& run_json) override;
    [[nodiscard]] Status set_state(int64_t id, RunState state, const std::string& detail,
                                   const std::string& slurm_state, StateWrite mode) override;
    [[nodiscard]] Status end_unseen(int64_t id, RunState state, const std::string& detail) override;
    [[nodiscard]] Result<StoredRun> find(const std::string& run_id_or_row) const override;
    [[nodiscard]] Result<StoredRun> row(int64_t id) const override;
    [[nodiscard]] Result<std::vector<StoredRun>> cluster_runs() const override;
    [[nodiscard]] Result<std::vector<StoredRun>> runs() const override;
    [[nodiscard]] Result<RunMetrics> metrics(int64_t id) const override;
    [[nodiscard]] Status remove(int64_t id) override;
    [[nodiscard]] Result<int64_t> version() const override;
    [[nodiscard]] Result<int64_t> find_opened_log(const std::string& path) const override;
    [[nodiscard]] Result<int64_t> record_opened_log(const std::string& path,
                                                    const std::string& name) override;
    [[nodiscard]] Result<int64_t> find_log_run(const std::string& profile,
                                               const std::string& path) const override;
    [[nodiscard]] Result<int64_t> record_remote_log(const std::string& profile, const std::string& path,
                                                    const std::string& name) override;
    [[nodiscard]] Status finish_opened_log(int64_t id, const RunMetrics& metrics) override;

private:
    RunHistory& history_;
};

}  // namespace slipway::app
