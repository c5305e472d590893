// HistoryRunStore: RunStore's calls as RunHistory's, std::string <-> QString at this edge only.
#include "history/history_run_store.h"

#include <QDateTime>

namespace slipway::app {

StoredRun to_stored_run(const RunRecord& row) {
    StoredRun out;
    out.id = row.id;
    out.run_id = row.run_id.toStdString();
    out.name = row.name.toStdString();
    out.cluster = row.cluster.toStdString();
    out.job_id = row.job_id.toStdString();
    out.slurm_cluster = row.slurm_cluster.toStdString();
    out.remote_dir = row.remote_dir.toStdString();
    out.log_path = row.log_path.toStdString();
    out.state = row.state;
    out.slurm_state = row.slurm_state.toStdString();
    out.state_detail = row.state_detail.toStdString();
    out.config_json = row.config_json.toStdString();
    out.created = row.created.isValid() ? row.created.toSecsSinceEpoch() : 0;
    return out;
}

std::string HistoryRunStore::location() const {
    return history_.path().toStdString();
}

Result<int64_t> HistoryRunStore::add(const StoredRun& run) {
    RunRecord row;
    row.name = QString::fromStdString(run.name);
    row.cluster = QString::fromStdString(run.cluster);
    row.job_id = QString::fromStdString(run.job_id);
    row.state = run.state;
    row.slurm_state = QString::fromStdString(run.slurm_state);
    row.state_detail = QString::fromStdString(run.state_detail);
    row.created = run.created > 0 ? QDateTime::fromSecsSinceEpoch(run.created) : QDateTime::currentDateTime();
    row.started = row.created;
    if (is_terminal(run.state)) row.finished = row.created;  // added ended (an engine that could not start)
    row.config_json = QString::fromStdString(run.config_json);
    row.log_path = QString::fromStdString(run.log_path);
    row.run_id = QString::fromStdString(run.run_id);
    row.remote_dir = QString::fromStdString(run.remote_dir);
    row.slurm_cluster = QString::fromStdString(run.slurm_cluster);
    return history_.add_run(row);
}

Status HistoryRunStore::record_job(const remote::RunRecord& record, const std::string& run_json) {
    return history_.record_submission(record, run_json).status();
}

Status HistoryRunStore::set_state(int64_t id, RunState state, const std::string& detail,
                                  const std::string& slurm_state, StateWrite mode) {
    return history_.set_state(id, state, QString::fromStdString(detail), QString::fromStdString(slurm_state),
                              is_terminal(state) ? QDateTime::currentDateTime() : QDateTime(), mode);
}

Status HistoryRunStore::end_unseen(int64_t id, RunState state, const std::string& detail) {
    return history_.set_state(id, state, QString::fromStdString(detail), {}, QDateTime(),
                              StateWrite::kIfNotEnded);
}

Result<StoredRun> HistoryRunStore::find(const std::string& run_id_or_row) const {
    const Result<int64_t> id = history_.find_run(QString::fromStdString(run_id_or_row));
    if (!id.ok()) return id.status();
    const Result<RunRecord> row = history_.run(*id);
    if (!row.ok()) return row.status();
    return to_stored_run(*row);
}

Result<std::vector<StoredRun>> HistoryRunStore::cluster_runs() const {
    const Result<std::vector<RunRecord>> rows = history_.cluster_runs();
    if (!rows.ok()) return rows.status();
    std::vector<StoredRun> out;
    out.reserve(rows->size());
    for (const RunRecord& row : *rows)
        out.push_back(to_stored_run(row));
    return out;
}

}  // namespace slipway::app
