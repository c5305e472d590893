// HistoryRunStore: RunStore's calls as RunHistory's, with the times a new row is given.
#include "history/history_run_store.h"

namespace slipway::app {

std::string HistoryRunStore::location() const {
    return history_.path();
}

Result<int64_t> HistoryRunStore::add(const StoredRun& run) {
    StoredRun row = run;
    if (row.created_ms == 0) row.created_ms = now_ms();
    if (row.started_ms == 0) row.started_ms = row.created_ms;
    // Added ended (an engine that could not start): it ended when it was made.
    if (is_terminal(row.state) && row.finished_ms == 0) row.finished_ms = row.created_ms;
    return history_.add_run(row);
}

Status HistoryRunStore::record_job(const remote::RunRecord& record, const std::string& run_json) {
    return history_.record_submission(record, run_json).status();
}

Status HistoryRunStore::set_state(int64_t id, RunState state, const std::string& detail,
                                  const std::string& slurm_state, StateWrite mode) {
    return history_.set_state(id, state, detail, slurm_state, is_terminal(state) ? now_ms() : 0, mode);
}

Status HistoryRunStore::end_unseen(int64_t id, RunState state, const std::string& detail) {
    return history_.set_state(id, state, detail, {}, 0, StateWrite::kIfNotEnded);
}

Result<StoredRun> HistoryRunStore::find(const std::string& run_id_or_row) const {
    const Result<int64_t> id = history_.find_run(run_id_or_row);
    if (!id.ok()) return id.status();
    return history_.run(*id);
}

Result<StoredRun> HistoryRunStore::row(int64_t id) const {
    return history_.run(id);
}

Result<std::vector<StoredRun>> HistoryRunStore::cluster_runs() const {
    return history_.cluster_runs();
}

Result<std::vector<StoredRun>> HistoryRunStore::runs() const {
    return history_.runs();
}

Result<RunMetrics> HistoryRunStore::metrics(int64_t id) const {
    return history_.load_metrics(id);
}

Status HistoryRunStore::remove(int64_t id) {
    return history_.remove_run(id);
}

Result<int64_t> HistoryRunStore::version() const {
    return history_.data_version();
}

Result<int64_t> HistoryRunStore::find_opened_log(const std::string& path) const {
    return history_.find_opened_log(path);
}

Result<int64_t> HistoryRunStore::record_opened_log(const std::string& path, const std::string& name) {
    return history_.record_opened_log(path, name);
}

Result<int64_t> HistoryRunStore::find_log_run(const std::string& profile, const std::string& path) const {
    return history_.find_log_run(profile, path);
}

Result<int64_t> HistoryRunStore::record_remote_log(const std::string& profile, const std::string& path,
                                                   const std::string& name) {
    return history_.record_remote_log(profile, path, name);
}

Status HistoryRunStore::finish_opened_log(int64_t id, const RunMetrics& metrics) {
    return history_.finish_opened_log(id, metrics);
}

}  // namespace slipway::app
