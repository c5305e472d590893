// RunTracker, the cluster half: submitting to a profile, Slurm state polling (one timer for every live job),
// following job logs and hand-opened cluster logs over the profile's ClusterSession, scancel, and what
// happens when the connection drops or the profile is edited. One set of connections per session, made
// by attach() and dispatched here by request, follow and job id.
#include <QDateTime>
#include <QFileInfo>
#include <QTimer>

#include "clusters/cluster_session.h"
#include "contract/mllog_keys.h"
#include "history/run_history.h"
#include "remote/deploy/run_record.h"
#include "runs/cluster_sessions.h"
#include "runs/run_tracker.h"
#include "service/lost_submission.h"

namespace slipway::app {
ClusterSession* RunTracker::session_for(const QString& profile) {
    return sessions_ == nullptr ? nullptr : sessions_->session(profile.toStdString());
}

void RunTracker::attach(ClusterSession* session) {
    if (session == nullptr || links_.count(session) != 0) return;
    SessionLink& link = links_[session];
    link.profile = QString::fromStdString(session->profile().name);
    link.connections = {
        connect(session, &ClusterSession::submitted, this,
                [this, session](int request, bool ok, const QString& error, const RemoteSubmission& s) {
                    on_submitted(session, request, ok, error, s);
                }),
        connect(session, &ClusterSession::job_state_known, this,
                [this, session](int, bool ok, const QString& job, const QString& word,
                                const QString& detail) { on_job_state(session, ok, job, word, detail); }),
        connect(session, &ClusterSession::job_nodes_known, this,
                [this, session](const QString& job, const std::vector<remote::NodeState>& nodes) {
                    on_job_nodes(session, job, nodes);
                }),
        connect(session, &ClusterSession::cancelled, this,
                [this, session](int request, bool ok, const QString& message) {
                    on_cancelled(session, request, ok, message);
                }),
        connect(session, &ClusterSession::follow_batch, this,
                [this, session](const FollowBatch& batch) { on_session_batch(session, batch); }),
        connect(session, &ClusterSession::connection_changed, this,
                [this, session](bool up, const QString& message) { on_connection(session, up, message); }),
    };
}

void RunTracker::detach(ClusterSession* session) {
    const auto it = links_.find(session);
    if (it == links_.end()) return;
    for (const QMetaObject::Connection& c : it->second.connections)
        disconnect(c);
    links_.erase(it);
}

Result<int> RunTracker::submit_cluster(const RunConfig& config, const QString& profile) {
    ClusterSession* session = session_for(profile);
    if (session == nullptr) return Result<int>::Error("no cluster profile named " + profile.toStdString());
    // The session's worker writes the run's row (the run service): submitting now, then its job or its
    // failure.
    const std::string run_id = remote::make_run_id(config.name);
    TrackedRun& run = registry_.add(RunKind::kClusterJob, config.name + " @ " + profile.toStdString(),
                                    RunState::kSubmitting);
    const int key = run.key;
    run.profile = profile.toStdString();
    run.live = true;
    attach(session);
    if (config.eval.target) {
        run.metrics.target = config.eval.target;
        run.metrics.target_higher_is_better = config.eval_higher_is_better();
    }
    run.run_id = run_id;
    run.submit_request = session->submit(config, options_.resource_root, options_.engine_binary,
                                         QString::fromStdString(run_id));
    emit run_added(key);
    emit message(tr("Submitting %1 to %2...").arg(QString::fromStdString(config.name), profile));
    return key;
}

void RunTracker::on_submitted(ClusterSession* session, int request, bool ok, const QString& error,
                              const RemoteSubmission& s) {
    TrackedRun* run = nullptr;
    for (auto& [key, r] : registry_) {
        if (r.source == RunKind::kClusterJob && r.submit_request == request &&
            r.profile == links_[session].profile.toStdString())
            run = &r;
    }
    if (run == nullptr) return;  // released meanwhile
    run->submit_request = 0;
    if (!s.store_problem.isEmpty()) emit history_problem(s.store_problem);
    // The worker wrote the row's state already: the tracker's copy follows it, then links to the row.
    if (!ok) {
        set_state(*run, RunState::kFailed, "submit: " + error.toStdString());
        run->store_id = s.store_id;
        emit store_changed();
        emit alert(run->key, RunAlert{RunAlertKind::kFailed, tr("submit: %1").arg(error).toStdString()});
        return;
    }
    run->job_id = s.job_id.toStdString();
    run->log_path = s.log_path.toStdString();
    run->cancellable = true;
    set_state(*run, RunState::kPending);
    run->store_id = s.store_id;
    emit store_changed();
    emit message(tr("Submitted job %1 to %2 (%3)").arg(s.job_id, text(run->profile), s.remote_dir));
    run->follow_id = session->follow(s.log_path, 0);
    ask_state(*run);
}

ClusterSession* RunTracker::session_to_ask(TrackedRun& run) {
    if (run.source != RunKind::kClusterJob || run.job_id.empty() || is_terminal(run.state)) return nullptr;
    ClusterSession* session = session_for(text(run.profile));
    if (session != nullptr) attach(session);
    return session;
}

void RunTracker::ask_state(TrackedRun& run) {
    ClusterSession* session = session_to_ask(run);
    if (session != nullptr && jobs_.ask(run.profile, run.job_id)) session->job_state(text(run.job_id));
}

void RunTracker::poll_jobs() {
    // The tracked runs' live jobs, per session.
    std::map<ClusterSession*, std::vector<std::string>> followed;
    for (auto& [key, run] : registry_) {
        if (ClusterSession* session = session_to_ask(run)) followed[session].push_back(run.job_id);
    }
    // The store's other live jobs join the question of a session that is up already.
    std::optional<std::vector<StoredRun>> rows;
    if (stored_runs_ != nullptr) {
        if (Result<std::vector<StoredRun>> all = stored_runs_->cluster_runs(); all.ok())
            rows = std::move(*all);
    }
    // A row whose submission's answer is on its way is the tracker's already.
    const auto is_followed = [this](const StoredRun& row) {
        return registry_.run_for_store(row.id) != 0 || registry_.submitting_run_id(row.run_id);
    };
    for (auto& [session, link] : links_) {
        const bool up = link.up == 1 && sessions_ != nullptr &&
                        sessions_->existing(link.profile.toStdString()) == session;
        if (!up && followed.count(session) == 0) continue;
        const std::vector<std::string> jobs = jobs_.to_ask(link.profile.toStdString(), followed[session],
                                                           up && rows ? &*rows : nullptr, is_followed);
        QStringList ids;
        for (const std::string& job : jobs)
            ids << QString::fromStdString(job);
        if (!ids.isEmpty()) session->job_states(ids);
    }
}

void RunTracker::on_job_state(ClusterSession* session, bool ok, const QString& job_id, const QString& word,
                              const QString& detail) {
    const std::string profile = links_[session].profile.toStdString();
    const std::string job = job_id.toStdString();
    const JobWatch::Clock::time_point now = JobWatch::Clock::now();
    std::optional<remote::JobInfo> answer;
    if (ok) {
        answer.emplace();
        answer->job_id = job;
        answer->state = word.toStdString();
        answer->node_list = detail.toStdString();  // node list and reason, as the worker wrote them
    }
    if (jobs_.answered(stored_runs_.get(), profile, job, answer, now,
                       [this](int64_t row) { return registry_.run_for_store(row) != 0; }))
        emit store_changed();
    for (const JobAnswerForRun& a :
         registry_.job_answered(profile, job, answer, ok ? std::string() : detail.toStdString(), now)) {
        if (a.failed_anew) emit message(tr("Job %1: %2").arg(job_id, detail));
        if (a.requeued) emit message(tr("Job %1 is %2 again (requeued): following it on").arg(job_id, word));
        report(a.key, a.change);
        const int key = a.key;
        if (a.settling) {
            // Asked again once an ended-looking word could count.
            QTimer::singleShot(static_cast<int>(options_.end_rule.settle.count()), this, [this, key] {
                if (TrackedRun* r = registry_.find(key); r != nullptr && !is_terminal(r->state))
                    ask_state(*r);
            });
        }
        TrackedRun* run = registry_.find(key);  // a slot may have released it
        if (!a.ended || run == nullptr) continue;
        if (ClusterSession* s = session_for(text(run->profile)); s != nullptr && run->follow_id != 0)
            s->finish_follow(run->follow_id);  // the log's tail is read to its end
        if (a.end_alert) {
            emit alert(key, RunAlert{is_success(a.end) ? RunAlertKind::kFinished : RunAlertKind::kFailed,
                                     tr("job %1 ended %2").arg(job_id, word).toStdString()});
        }
    }
}

void RunTracker::on_job_nodes(ClusterSession* session, const QString& job_id,
                              const std::vector<remote::NodeState>& nodes) {
    const std::string profile = links_[session].profile.toStdString();
    const std::string job = job_id.toStdString();
    for (auto& [key, run] : registry_) {
        if (run.source != RunKind::kClusterJob || run.profile != profile || run.job_id != job) continue;
        if ((run.state != RunState::kRunning && run.state != RunState::kStalled) || run.node_states == nodes)
            continue;
        run.node_states = nodes;
        emit run_changed(run.key);
    }
}

void RunTracker::on_cancelled(ClusterSession* session, int request, bool ok, const QString& answer) {
    SessionLink& link = links_[session];
    const auto it = link.cancel_to_key.find(request);
    if (it == link.cancel_to_key.end()) return;
    const int key = it->second;
    link.cancel_to_key.erase(it);
    TrackedRun* run = registry_.find(key);
    if (run == nullptr) return;
    if (!ok) {
        emit message(tr("Cancelling job %1 failed: %2").arg(QString::fromStdString(run->job_id), answer));
        return;
    }
    run->watch.mark_ended();  // the engine's run_stop "aborted" is the cancel, not a failure
    ask_state(*run);          // Slurm's word (CANCELLED) ends it
}

void RunTracker::on_session_batch(ClusterSession* session, const FollowBatch& batch) {
    const std::string profile = links_[session].profile.toStdString();
    for (auto& [key, run] : registry_) {
        if ((run.source == RunKind::kClusterJob || run.source == RunKind::kClusterLog) &&
            run.profile == profile && run.follow_id == batch.follow_id && batch.follow_id != 0) {
            apply(run, batch);
            return;
        }
    }
}

void RunTracker::on_connection(ClusterSession* session, bool up, const QString& why) {
    SessionLink& link = links_[session];
    if (link.up == int(up)) return;  // one message per change, however many runs and polls
    link.up = int(up);
    emit connection_changed(link.profile, up, why);
}

void RunTracker::on_session_gone(const QString& profile, ClusterSession* old_session, bool replaced) {
    detach(old_session);  // the old session's follows die with it
    const std::string name = profile.toStdString();
    // A submission's answer died with the session: the store says whether sbatch got the job (refollow
    // below for a replaced profile; a removed one cannot be followed any more).
    for (const RunChange& changed : registry_.cluster_gone(name, !replaced))
        report(changed.key, changed.change);
    jobs_.forget_cluster(name);  // answers that will not come
    // The new session exists only once the old one is gone: follow again from where each run stopped.
    if (replaced) QTimer::singleShot(0, this, [this, profile] { refollow(profile); });
}

void RunTracker::refollow(const QString& profile) {
    ClusterSession* session = session_for(profile);
    if (session == nullptr) return;
    const std::string name = profile.toStdString();
    for (auto& [key, run] : registry_) {
        if (run.profile == name && run.source == RunKind::kClusterJob && run.submit_request != 0)
            adopt_lost_submission(run);
        if (run.profile != name || run.follow_id != 0 || !run.live || run.log_path.empty()) continue;
        if (run.source == RunKind::kClusterJob && is_terminal(run.state)) continue;
        if (run.source != RunKind::kClusterJob && run.source != RunKind::kClusterLog) continue;
        attach(session);
        run.follow_id = session->follow(text(run.log_path), run.log_offset);
        ask_state(run);
    }
}

void RunTracker::adopt_lost_submission(TrackedRun& run) {
    // The old session's worker finished the submission (its destructor waited) and recorded the outcome in
    // the store, but its `submitted` answer went with it.
    run.submit_request = 0;
    const LostSubmission fate =
        lost_submission(stored_runs_ != nullptr ? stored_runs_->find(run.run_id)
                                                : Result<StoredRun>(Status::Error("no run history")));
    if (!fate.job_id.empty()) {
        run.job_id = fate.job_id;
        run.log_path = fate.log_path;
    }
    run.cancellable = fate.cancellable;
    // Linked to the row after taking its word over, so nothing is written over it; before, when the row is
    // to be told.
    if (fate.write_to_row) run.store_id = fate.row;
    set_state(run, fate.state, fate.detail);
    run.store_id = fate.row;
}

Result<int> RunTracker::open_cluster_log(const QString& profile, const QString& path) {
    ClusterSession* session = session_for(profile);
    if (session == nullptr) return Result<int>::Error("no cluster profile named " + profile.toStdString());
    const QString name = QFileInfo(path).fileName() + QStringLiteral(" @ ") + profile;
    // Stored like a run (one per remote file): opened again, it shows its stored points and reads on from the
    // stored offset, so nothing is read or stored twice.
    int64_t store_id = 0;
    quint64 offset = 0;
    RunMetrics stored;
    if (store_ != nullptr) {
        if (const Result<int64_t> before = store_->find_log_run(profile, path); before.ok()) {
            if (const int shown = registry_.run_for_store(*before)) release(shown);
        }
        if (const Result<int64_t> id = store_->record_remote_log(profile, path, name); id.ok()) {
            const Result<StoredRun> record = store_->run(*id);
            Result<RunMetrics> metrics = store_->load_metrics(*id);
            if (record.ok() && metrics.ok()) {
                store_id = *id;
                offset = record->log_offset;
                stored = std::move(*metrics);
            }
        }
    }
    TrackedRun& run = registry_.add(RunKind::kClusterLog, name.toStdString(), RunState::kFollowing);
    run.profile = profile.toStdString();
    run.log_path = path.toStdString();
    run.log_offset = offset;
    run.store_id = store_id;
    run.live = true;
    run.metrics = std::move(stored);
    attach(session);
    run.follow_id = session->follow(path, offset);
    emit run_added(run.key);
    emit store_changed();
    return run.key;
}

}  // namespace slipway::app
