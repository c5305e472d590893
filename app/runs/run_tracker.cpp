// RunTracker: runs on This computer, log files, stored runs, and what every run shares (state changes,
// folding log batches into metrics and the store, alerts, stalls, release). The cluster half is in
// run_tracker_cluster.cpp.
#include "runs/run_tracker.h"

#include <QFile>
#include <QFileInfo>
#include <QtDebug>

#include <ctime>

#include "contract/mllog_keys.h"
#include "core/engine_command.h"
#include "history/history_writer.h"
#include "history/run_history.h"
#include "runs/cluster_sessions.h"
#include "service/follow_again.h"
#include "service/stale_runs.h"

namespace slipway::app {
RunTracker::RunTracker(RunHistory* store, FollowService* follow, ClusterSessions* sessions, Options options,
                       QObject* parent)
    : QObject(parent),
      store_(store),
      follow_(follow),
      sessions_(sessions),
      options_(std::move(options)),
      stored_runs_(store_ != nullptr ? std::make_unique<HistoryRunStore>(*store_) : nullptr),
      jobs_(options_.end_rule),
      registry_({options_.stall_factor, options_.stall_min_ms, options_.end_rule}, stored_runs_.get()) {
    connect(follow_, &FollowService::batch, this, &RunTracker::on_file_batch);
    if (store_ != nullptr) {
        connect(&store_->writer(), &HistoryWriter::write_failed, this, &RunTracker::history_problem);
        connect(&store_->writer(), &HistoryWriter::write_recovered, this, &RunTracker::history_problem);
    }
    if (sessions_ != nullptr) {
        connect(sessions_, &ClusterSessions::session_replaced, this,
                [this](const QString& profile, ClusterSession* old) { on_session_gone(profile, old, true); });
        connect(
            sessions_, &ClusterSessions::session_removed, this,
            [this](const QString& profile, ClusterSession* old) { on_session_gone(profile, old, false); });
        // Every session, whoever opened it (the Clusters page's test too): its connection state is known, and
        // runs submitted elsewhere can be asked about over it.
        connect(sessions_, &ClusterSessions::session_created, this,
                [this](const QString&, ClusterSession* session) { attach(session); });
    }
    RunStore* runs_store = stored_runs_.get();
    if (runs_store == nullptr) {
        no_store_ = std::make_unique<NoRunStore>();
        runs_store = no_store_.get();
    }
    local_executor_ = std::make_unique<LocalExecutor>(
        *runs_store,
        LocalExecutor::Options{options_.resource_root.toStdString(), options_.local_runs_dir.toStdString(),
                               QFile::encodeName(options_.engine_binary).toStdString()});
    local_timer_.setInterval(options_.local_poll_ms);
    connect(&local_timer_, &QTimer::timeout, this, &RunTracker::poll_local);
    stall_timer_.setInterval(options_.stall_check_ms);
    connect(&stall_timer_, &QTimer::timeout, this, &RunTracker::check_stalls);
    stall_timer_.start();
    poll_timer_.setInterval(options_.job_poll_ms);
    connect(&poll_timer_, &QTimer::timeout, this, &RunTracker::poll_jobs);
    poll_timer_.start();
    if (store_ != nullptr) {
        // The baseline now: a change before the first tick is a change too.
        if (const Result<int64_t> version = store_->data_version(); version.ok()) store_version_ = *version;
        store_timer_.setInterval(options_.store_watch_ms);
        connect(&store_timer_, &QTimer::timeout, this, &RunTracker::watch_store);
        store_timer_.start();
    }
}

void RunTracker::watch_store() {
    const Result<int64_t> version = store_->data_version();
    if (!version.ok()) return;
    const bool changed = store_version_ >= 0 && *version != store_version_;
    store_version_ = *version;
    if (!changed) return;
    // Runs another process runs here: their rows say how they go.
    for (const OwnersWord& word : registry_.read_owners_rows()) {
        if (word.changed) emit run_changed(word.key);
        const TrackedRun* run = registry_.find(word.key);  // a slot may have released it
        if (word.ended && run != nullptr && run->follow_id != 0)
            follow_->finish(run->follow_id);  // its last lines
    }
    emit store_changed();
}

RunTracker::~RunTracker() {
    for (auto& [session, link] : links_) {
        for (const QMetaObject::Connection& c : link.connections)
            disconnect(c);
    }
    links_.clear();
    // Engines still training are stopped with the app, all at once (a few seconds at most: the window is
    // closing); their rows say so, so the next start's sweep need not.
    (void)local_.close_all(kClosedWhileRunningDetail, kClosingGrace);
    for (auto& [key, run] : registry_) {
        if (run.follow_id != 0 && follows_local_file(run.source)) follow_->stop(run.follow_id);
        if (run.store_id != 0) close_store_queue(run.store_id);
    }
}

void RunTracker::set_stall_policy(double factor, int64_t min_ms, int check_ms) {
    options_.stall_check_ms = check_ms;
    registry_.set_stall_policy(factor, min_ms);  // the registry's watches hold the policy
    stall_timer_.setInterval(check_ms);
}

const TrackedRun* RunTracker::run(int key) const {
    return registry_.find(key);
}

int RunTracker::run_for_store(int64_t store_id) const {
    return registry_.run_for_store(store_id);
}

bool RunTracker::submitting_run_id(const QString& run_id) const {
    return registry_.submitting_run_id(run_id.toStdString());
}

std::vector<int> RunTracker::keys() const {
    return registry_.keys();
}

int RunTracker::local_runs_active() const {
    return local_.size();
}

int RunTracker::session_connections() const {
    int n = 0;
    for (const auto& [session, link] : links_)
        n += static_cast<int>(link.connections.size());
    return n;
}

bool RunTracker::store_failing() const {
    return store_ != nullptr && store_->writer().failing();
}

void RunTracker::set_target(int key, std::optional<double> target, bool higher_is_better) {
    TrackedRun* run = registry_.find(key);
    if (run == nullptr) return;
    run->metrics.target = target;
    run->metrics.target_higher_is_better = higher_is_better;
    emit run_changed(key);
}

void RunTracker::set_state(TrackedRun& run, RunState state, const std::string& detail,
                           const std::string& slurm_state, StateSource source) {
    report(run.key, registry_.set_state(run, state, detail, slurm_state, source));
}

void RunTracker::report(int key, const StateChange& change) {
    if (!change.changed) return;
    if (change.stored) {
        if (!change.store_problem.empty()) emit history_problem(text(change.store_problem));
        emit store_changed();
    }
    emit run_changed(key);
}

// ---- This computer ----

Result<int> RunTracker::submit_local(const RunConfig& config, const QStringList& overrides) {
    std::vector<std::string> flags;
    for (const QString& o : overrides)
        flags.push_back(o.toStdString());
    Result<LocalJob> started = local_executor_->submit(config, flags);
    if (!started.ok()) {
        emit store_changed();  // a run that could not start is stored failed
        return started.status();
    }
    const LocalRunPlan& plan = started->plan();
    TrackedRun& run = registry_.add(RunKind::kLocal, plan.config.name, RunState::kRunning);
    const int key = run.key;
    run.profile = kLocalCluster;
    run.log_path = plan.mllog_path;
    run.job_id = std::to_string(started->pid());
    run.store_id = started->run().id;
    run.cancellable = true;
    run.live = true;
    if (plan.config.eval.target) {
        run.metrics.target = plan.config.eval.target;
        run.metrics.target_higher_is_better = plan.config.eval_higher_is_better();
    }
    if (!started->store_problem().empty())
        emit history_problem(QString::fromStdString(started->store_problem()));
    run.follow_id = follow_->follow(text(run.log_path));
    const QString command = QString::fromStdString(command_line(plan.engine, plan.arguments));
    local_.add(key, std::move(*started));
    if (!local_timer_.isActive()) local_timer_.start();
    emit run_added(key);
    emit store_changed();
    emit message(tr("Started %1: %2").arg(text(run.name), command));
    return key;
}

void RunTracker::poll_local() {
    for (const LocalJobs::Ended& ended : local_.poll()) {
        // The run service stored the end in the run's row.
        if (!ended.store_problem.empty()) emit history_problem(QString::fromStdString(ended.store_problem));
        emit store_changed();
        const LocalEnd& end = ended.end;
        // A run removed from the monitor while it trained has no entry: its row learnt how it ended.
        if (TrackedRun* r = registry_.find(ended.key)) {
            if (r->follow_id != 0) follow_->finish(r->follow_id);  // the engine's last lines too
            set_state(*r, end.state, end.detail, {}, StateSource::kService);
            // One end alert: none when the log's run_stop gave it, or for a cancel (asked for).
            if (end.state == RunState::kFailed && !r->watch.ended()) {
                r->watch.mark_ended();
                emit alert(ended.key,
                           RunAlert{RunAlertKind::kFailed, tr("the engine ended with %1")
                                                               .arg(QString::fromStdString(end.detail))
                                                               .toStdString()});
            }
        }
        emit local_run_finished(ended.key, end.exit.signal == 0 ? end.exit.code : -1);
    }
    if (local_.empty()) local_timer_.stop();
}

// ---- Log files ----

Result<int> RunTracker::open_log(const QString& path) {
    const QFileInfo info(path);
    if (!info.isFile() || !info.isReadable()) {
        return Result<int>::Error("cannot open log file '" + path.toStdString() + "': " +
                                  (info.exists() ? "not a readable file" : "No such file or directory"));
    }
    // Kept in the history like a run (one per file: opening it again reads it again into the same run).
    int64_t store_id = 0;
    if (store_ != nullptr) {
        const QString canonical = info.canonicalFilePath();
        if (const Result<int64_t> before = store_->find_opened_log(canonical); before.ok()) {
            if (const int shown = registry_.run_for_store(*before)) release(shown);  // before its points go
        }
        if (const Result<int64_t> id = store_->record_opened_log(canonical, info.fileName()); id.ok()) {
            store_id = *id;
        } else {
            emit history_problem(QString::fromStdString(id.error()));
        }
    }
    TrackedRun& run = registry_.add(RunKind::kLogFile, info.fileName().toStdString(), RunState::kReading);
    run.profile = kOpenedLogCluster;
    run.log_path = info.absoluteFilePath().toStdString();
    run.store_id = store_id;
    run.loading = true;
    run.follow_id = follow_->follow(info.absoluteFilePath());
    emit run_added(run.key);
    emit store_changed();
    return run.key;
}

int RunTracker::follow_log(const QString& path, const QString& name) {
    TrackedRun& run = registry_.add(RunKind::kLogFile, name.toStdString(), RunState::kRunning);
    run.profile = kOpenedLogCluster;
    run.log_path = path.toStdString();
    run.live = true;
    run.follow_id = follow_->follow(path);
    emit run_added(run.key);
    return run.key;
}

void RunTracker::on_file_batch(const FollowBatch& batch) {
    if (TrackedRun* run = registry_.find_by_follow(RunKind::kLogFile, batch.follow_id)) apply(*run, batch);
}

void RunTracker::apply(TrackedRun& run, const FollowBatch& batch) {
    const int key = run.key;
    HistoryWriter* writer = store_ != nullptr && run.store_id != 0 ? &store_->writer() : nullptr;
    // A rewritten log (a restarted job): its old curves are gone, the stored points too.
    FoldedEvents folded = registry_.fold(run, batch.events, batch.reset, now_ms());
    if (batch.reset && writer != nullptr) writer->reset(run.store_id);
    if (writer != nullptr && (!folded.rows.empty() || batch.offset > 0))
        writer->append(run.store_id, std::move(folded.rows), run.metrics, batch.offset);
    if (batch.offset > 0) run.log_offset = batch.offset;
    run.bad_lines += batch.bad_lines;
    for (const QString& line : batch.lines)
        run.job_watch.saw_log_line(line.toStdString());  // a requeue the job's script announces

    if (run.loading && !batch.behind && !batch.missing) {
        if (batch.finished) {
            run.loading = false;
            run.follow_id = 0;
        } else {
            follow_->finish(run.follow_id);  // a last line without '\n' too
        }
    } else if (batch.finished && follows_local_file(run.source)) {
        run.follow_id = 0;
    }
    emit batch_applied(key, batch, folded.first_new);

    // What the log itself says of the run's state (the run service's rule).
    const LogVerdict verdict = RunRegistry::log_verdict(run, folded, !run.loading && batch.finished);
    const bool stored = store_ != nullptr && run.store_id != 0;
    if (verdict.state && verdict.ended_by_log && !run.live) {
        // An opened file read to its end: its state, start and end stored in one write.
        if (stored) {
            if (const Status s = store_->finish_opened_log(run.store_id, run.metrics); !s.ok())
                emit history_problem(QString::fromStdString(s.message()));
            emit store_changed();
        }
        run.state = *verdict.state;
        run.state_detail = verdict.detail;
        emit run_changed(key);
        emit loaded(key);
    } else if (verdict.state) {
        set_state(run, *verdict.state, verdict.detail);
        if (verdict.ended_by_log && stored) (void)store_->finish_opened_log(run.store_id, run.metrics);
    }
    if (verdict.ask_slurm_now) {
        QTimer::singleShot(options_.after_run_stop_ms, this, [this, key] {
            if (TrackedRun* r = registry_.find(key); r != nullptr && !is_terminal(r->state)) ask_state(*r);
        });
    }
    for (const RunAlert& a : folded.alerts)
        emit alert(key, a);
    emit run_changed(key);
}

void RunTracker::check_stalls() {
    for (const RunChange& taken : registry_.take_over_orphans()) {
        report(taken.key, taken.change);
        const TrackedRun* run = registry_.find(taken.key);  // a slot may have released it
        if (run != nullptr && run->follow_id != 0) follow_->finish(run->follow_id);  // the log's last lines
    }
    for (const Stall& stall : registry_.check_stalls(now_ms())) {
        report(stall.key, stall.change);
        emit alert(stall.key, stall.alert);
    }
}

// ---- Stored runs ----

int RunTracker::show_curves(const QString& name, RunMetrics metrics, RunState state) {
    TrackedRun& run = registry_.add(RunKind::kLogFile, name.toStdString(), state);
    run.metrics = std::move(metrics);
    emit run_added(run.key);
    return run.key;
}

TrackedRun& RunTracker::add_stored(const StoredRun& record, RunMetrics metrics, RunKind source) {
    TrackedRun& run = registry_.add(source, record.name, record.state);
    run.profile = record.cluster;
    run.state_detail = record.state_detail;
    run.slurm_state = record.slurm_state;
    run.job_id = record.job_id;
    run.log_path = record.log_path;
    run.log_offset = record.log_offset;
    run.store_id = record.id;
    run.metrics = std::move(metrics);
    return run;
}

Result<int> RunTracker::show_stored(int64_t store_id) {
    if (store_ == nullptr) return Result<int>::Error("no run history");
    if (const int existing = registry_.run_for_store(store_id)) return existing;
    const Result<StoredRun> record = store_->run(store_id);
    if (!record.ok()) return record.status();
    Result<RunMetrics> metrics = store_->load_metrics(store_id);
    if (!metrics.ok()) return metrics.status();
    const TrackedRun& run = add_stored(*record, std::move(*metrics), record->kind());
    emit run_added(run.key);
    return run.key;
}

Result<int> RunTracker::resume(int64_t store_id) {
    if (store_ == nullptr) return Result<int>::Error("no run history");
    const int existing = registry_.run_for_store(store_id);
    if (existing != 0 && local_.find(existing) != nullptr) return existing;  // ours, still training
    const int own_key = local_.key_of_run(store_id);  // ours, released from the monitor while it trained
    // Refused before the shown run goes: a row with no log, a job whose cluster has no profile any more.
    const Result<StoredRun> before = store_->run(store_id);
    if (!before.ok()) return before.status();
    const StoredRun row = *before;
    if (Result<FollowAgain> refused = plan_follow_again(row, local_.find(own_key)); !refused.ok())
        return refused.status();
    if ((row.kind() == RunKind::kClusterJob || row.kind() == RunKind::kClusterLog) &&
        session_for(QString::fromStdString(row.cluster)) == nullptr) {
        return Result<int>::Error("run " + std::to_string(store_id) + " ran on cluster " + row.cluster +
                                  ", which has no profile any more");
    }
    // The shown run goes before the offset and points are read: releasing it flushes its queued points
    // (history_writer.h), so the resumed follower neither skips nor repeats a point.
    if (existing != 0) release(existing);
    const Result<StoredRun> record = store_->run(store_id);
    if (!record.ok()) return record.status();
    const Result<FollowAgain> plan = plan_follow_again(*record, local_.find(own_key));
    if (!plan.ok()) return plan.status();
    // A log on a cluster opened by hand: followed again there from where it stopped.
    const QString cluster = QString::fromStdString(record->cluster);
    const QString log_path = QString::fromStdString(record->log_path);
    if (plan->followed_as == RunKind::kClusterLog) return open_cluster_log(cluster, log_path);
    ClusterSession* session = plan->followed_as == RunKind::kClusterJob ? session_for(cluster) : nullptr;
    Result<RunMetrics> metrics = store_->load_metrics(store_id);
    if (!metrics.ok()) return metrics.status();
    TrackedRun& run = add_stored(*record, std::move(*metrics), plan->followed_as);
    run.live = plan->live;
    run.cancellable = plan->cancellable;
    run.state_from_store = plan->state_from_store;
    if (session != nullptr) {
        // Its log is on the login node: followed there from the stored offset (a reconnect after the app or
        // the connection went away); an ended job's is read to its end once, not polled for ever.
        run.name += " @ " + record->cluster;
        attach(session);
        run.follow_id = session->follow(log_path, record->log_offset);
        if (!plan->live) session->finish_follow(run.follow_id);
    } else {
        run.follow_id = follow_->follow(log_path, record->log_offset);
    }
    if (own_key != 0) (void)local_.rekey(own_key, run.key);
    emit run_added(run.key);
    if (plan->ask_slurm) ask_state(run);
    return run.key;
}

Status RunTracker::cancel(int key) {
    TrackedRun* run = registry_.find(key);
    if (run == nullptr) return Status::Error("no such run");
    if (LocalJob* job = local_.find(key)) {
        run->watch.mark_ended();  // the engine's run_stop "aborted" answers the cancel: no failure alert
        job->cancel(std::chrono::milliseconds(options_.local_cancel_grace_ms));
        emit message(tr("Cancelling %1...").arg(text(run->name)));
        return Status::Ok();
    }
    if (run->state_from_store && !is_terminal(run->state)) {
        // Another process runs it here: its engine is asked to stop, and that process stores the end.
        const Result<StoredRun> row = store_->run(run->store_id);
        if (!row.ok()) return row.status();
        if (Status s = stop_local_run(*row); !s.ok()) return s;
        run->watch.mark_ended();  // the engine's run_stop "aborted" answers the cancel: no failure alert
        emit message(tr("Cancelling %1...").arg(text(run->name)));
        return Status::Ok();
    }
    if (run->source != RunKind::kClusterJob || run->job_id.empty() || is_terminal(run->state))
        return Status::Error(run->name + " is not a running job");
    ClusterSession* session = session_for(text(run->profile));
    if (session == nullptr) return Status::Error("no cluster profile named " + run->profile);
    attach(session);
    const int request = session->cancel(text(run->job_id));
    links_[session].cancel_to_key[request] = key;
    emit message(tr("scancel %1 sent").arg(text(run->job_id)));
    return Status::Ok();
}

void RunTracker::close_store_queue(int64_t store_id) {
    if (store_ == nullptr || store_id == 0) return;
    if (const Status s = store_->writer().close_run(store_id); !s.ok()) {
        qWarning().noquote() << "slipway:" << QString::fromStdString(s.message());
        emit history_problem(QString::fromStdString(s.message()));
    }
}

void RunTracker::release(int key) {
    TrackedRun* found = registry_.find(key);
    if (found == nullptr) return;
    TrackedRun& run = *found;
    if (run.follow_id != 0) {
        if (follows_local_file(run.source)) {
            follow_->stop(run.follow_id);
        } else if (sessions_ != nullptr) {
            if (ClusterSession* s = sessions_->existing(run.profile)) s->stop_follow(run.follow_id);
        }
    }
    // A log on a cluster no longer followed, which has not said how it ended.
    if (run.source == RunKind::kClusterLog && run.state == RunState::kFollowing && run.store_id != 0 &&
        store_ != nullptr) {
        (void)store_->set_state(run.store_id, RunState::kIncomplete);
        emit store_changed();
    }
    const int64_t store_id = run.store_id;
    registry_.remove(key);
    close_store_queue(store_id);
    emit run_released(key);
}

void RunTracker::release_all() {
    while (!registry_.empty())
        release(registry_.begin()->first);
}

Status RunTracker::delete_stored(int64_t store_id) {
    if (store_ == nullptr) return Status::Error("no run history");
    // Ours and still training (shown, or released from the monitor): its end is still to be stored in the
    // row.
    if (local_.key_of_run(store_id) != 0) return Status::Error("the run is still training; cancel it first");
    if (const int shown = registry_.run_for_store(store_id)) release(shown);
    const Status s = store_->remove_run(store_id);
    emit store_changed();
    return s;
}

void RunTracker::recover_after_restart() {
    if (store_ == nullptr) return;
    const Result<std::vector<StoredRun>> rows = store_->runs();
    if (!rows.ok()) return;
    if (end_stale_runs(*rows, *stored_runs_, std::time(nullptr)) > 0) emit store_changed();
}

}  // namespace slipway::app
