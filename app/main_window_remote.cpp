// MainWindow, the cluster half: submitting a run to a cluster profile, following its job (log over SSH,
// Slurm state), opening any log that lives on a cluster, and building or importing the run's image there.
// Every remote call goes through the profile's ClusterSession (a worker thread); answers come back as queued
// signals matched by request or follow id.
#include <QFileInfo>
#include <QInputDialog>
#include <QMessageBox>
#include <QStatusBar>
#include <QTimer>

#include "clusters/cluster_dialogs.h"
#include "clusters/cluster_session.h"
#include "clusters/remote_browser.h"
#include "clusters_page.h"
#include "editor/container_panel.h"
#include "editor/run_editor.h"
#include "history/run_history.h"
#include "images/image_job.h"
#include "local/engine_command.h"
#include "main_window.h"
#include "monitor/monitor_widget.h"
#include "runs/run_state.h"
#include "runs_page.h"

namespace slipway::app {

Result<int> MainWindow::submit_remote(const QString& profile) {
    const RunDocument& doc = editor_->document();
    if (!doc.valid())
        return Result<int>::Error("the run config has problems:\n" + format_problems(doc.problems()));
    ClusterSession* session = clusters_->session(profile.toStdString());
    if (session == nullptr) return Result<int>::Error("no cluster profile named " + profile.toStdString());
    const RunConfig config = doc.config();
    int64_t history_id = 0;
    if (history_) {
        RunRecord record;
        record.name = QString::fromStdString(config.name);
        record.cluster = profile;
        record.state = RunState::kSubmitting;
        record.started = QDateTime::currentDateTime();
        record.config_json = QString::fromStdString(to_json(config).dump(2));
        if (const Result<int64_t> id = history_->add_run(record); id.ok()) history_id = *id;
    }
    const int key = monitor_->watch_run(QString::fromStdString(config.name) + QStringLiteral(" @ ") + profile,
                                        history_id);
    if (config.eval.target) monitor_->set_target(key, config.eval.target, config.eval_higher_is_better());
    RemoteRun& run = remote_runs_[key];
    run.profile = profile.toStdString();
    run.history_id = history_id;
    run.submit_request = session->submit(config, resource_root_, find_engine_binary());
    connect(
        session, &ClusterSession::submitted, this,
        [this, key](int request, bool ok, const QString& error, const RemoteSubmission& s) {
            const auto it = remote_runs_.find(key);
            if (it == remote_runs_.end() || it->submit_request != request) return;  // not ours / stale
            it->submit_request = 0;
            if (!ok) {
                it->ended = true;
                monitor_->set_state(key, display_text(RunState::kFailed));
                if (history_ && it->history_id != 0) {
                    history_->set_state(it->history_id, RunState::kFailed, QStringLiteral("submit: ") + error,
                                        {}, QDateTime::currentDateTime());
                }
                notify(monitor_->run(key)->name,
                       RunAlert{RunAlertKind::kFailed, "submit: " + error.toStdString()});
                runs_->reload();
                return;
            }
            it->job_id = s.job_id;
            if (history_ && it->history_id != 0) {
                if (Result<RunRecord> r = history_->run(it->history_id); r.ok()) {
                    r->job_id = s.job_id;
                    r->state = RunState::kPending;
                    r->log_path = s.log_path;
                    r->config_json = s.run_json;
                    history_->update_run(*r);
                }
            }
            monitor_->set_state(key, QStringLiteral("PENDING"));
            monitor_->set_cancellable(key, true);
            statusBar()->showMessage(tr("Submitted job %1 to %2 (%3)")
                                         .arg(s.job_id, QString::fromStdString(it->profile), s.remote_dir));
            it->follow_id = clusters_->session(it->profile)->follow(s.log_path, 0);
            watch_remote(key);
            runs_->reload();
        });
    show_page(kMonitorPage);
    statusBar()->showMessage(tr("Submitting %1 to %2...").arg(QString::fromStdString(config.name), profile));
    return key;
}

void MainWindow::watch_remote(int key) {
    RemoteRun& run = remote_runs_[key];
    ClusterSession* session = clusters_->session(run.profile);
    if (session == nullptr) return;
    connect(session, &ClusterSession::follow_batch, this, [this, key](const FollowBatch& batch) {
        const auto it = remote_runs_.find(key);
        if (it == remote_runs_.end() || it->follow_id != batch.follow_id) return;
        monitor_->feed(key, batch);
        // The engine logged run_stop: ask Slurm now rather than at the next poll.
        const MonitorRun* shown = monitor_->run(key);
        if (!it->ended && shown != nullptr && shown->metrics.run_stop_ms && !it->stop_seen) {
            it->stop_seen = true;
            QTimer::singleShot(1500, this, [this, key] {
                const auto r = remote_runs_.find(key);
                if (r == remote_runs_.end() || r->ended) return;
                if (ClusterSession* s = clusters_->session(r->profile)) s->job_state(r->job_id);
            });
        }
    });
    connect(session, &ClusterSession::job_state_known, this,
            [this, key](int, bool ok, const QString& job_id, const QString& state, const QString& detail) {
                const auto it = remote_runs_.find(key);
                if (it == remote_runs_.end() || it->job_id != job_id) return;
                if (!ok) {
                    statusBar()->showMessage(tr("Job %1: %2").arg(job_id, detail));
                    return;
                }
                on_remote_state(key, state, detail);
            });
    connect(session, &ClusterSession::connection_changed, this,
            [this, profile = run.profile](bool up, const QString& m) {
                statusBar()->showMessage(
                    up ? tr("%1: connected (%2)").arg(QString::fromStdString(profile), m)
                       : tr("%1: connection lost, reconnecting: %2").arg(QString::fromStdString(profile), m));
            });
    run.poll = new QTimer(this);
    run.poll->setInterval(10'000);
    connect(run.poll, &QTimer::timeout, this, [this, key] {
        const auto it = remote_runs_.find(key);
        if (it == remote_runs_.end() || it->ended) return;
        if (ClusterSession* s = clusters_->session(it->profile)) s->job_state(it->job_id);
    });
    run.poll->start();
    session->job_state(run.job_id);
}

void MainWindow::on_remote_state(int key, const QString& state, const QString& detail) {
    RemoteRun& run = remote_runs_[key];
    if (run.ended) return;
    monitor_->set_state(key, detail.isEmpty() ? state : QStringLiteral("%1 on %2").arg(state, detail));
    const RunState run_state = from_slurm(state.toStdString());
    const bool terminal = is_terminal(run_state);
    if (history_ && run.history_id != 0) {
        history_->set_state(run.history_id, run_state, detail, state,
                            terminal ? QDateTime::currentDateTime() : QDateTime(), StateWrite::kIfNotEnded);
    }
    if (!terminal) return;
    run.ended = true;
    run.poll->stop();
    monitor_->set_cancellable(key, false);
    if (ClusterSession* s = clusters_->session(run.profile)) s->finish_follow(run.follow_id);
    const MonitorRun* shown = monitor_->run(key);
    const bool success = is_success(run_state);
    // The engine's run_stop already announced a success: no second notification.
    if (success && shown != nullptr && shown->metrics.status == "success") {
        runs_->reload();
        return;
    }
    // Otherwise Slurm's word decides (a job that exited 0 is COMPLETED even when the log says little).
    notify(shown != nullptr ? shown->name : QString(),
           RunAlert{success ? RunAlertKind::kFinished : RunAlertKind::kFailed,
                    "job " + run.job_id.toStdString() + " ended " + state.toStdString()});
    runs_->reload();
}

void MainWindow::choose_remote_log() {
    QStringList names;
    for (const remote::ClusterProfile& p : clusters_->profiles())
        names << QString::fromStdString(p.name);
    if (names.isEmpty()) {
        QMessageBox::information(this, tr("Open log on a cluster"),
                                 tr("Add a cluster on the Clusters page first."));
        return;
    }
    bool ok = false;
    const QString profile =
        QInputDialog::getItem(this, tr("Open log on a cluster"), tr("Cluster:"), names, 0, false, &ok);
    if (!ok) return;
    ClusterSession* session = clusters_->session(profile.toStdString());
    if (session == nullptr) return;
    RemoteBrowser browser(session, false, QString(), this);
    if (browser.exec() != QDialog::Accepted) return;
    if (const Result<int> key = open_remote_log(profile, browser.chosen()); !key.ok()) {
        QMessageBox::warning(this, tr("Open log on a cluster"), QString::fromStdString(key.error()));
    }
}

Result<int> MainWindow::open_remote_log(const QString& profile, const QString& path) {
    ClusterSession* session = clusters_->session(profile.toStdString());
    if (session == nullptr) return Result<int>::Error("no cluster profile named " + profile.toStdString());
    const QString name = QFileInfo(path).fileName() + QStringLiteral(" @ ") + profile;
    // Stored like a run (one per remote file): opened again, it shows its stored points and reads on from
    // the stored offset, so nothing is read or stored twice.
    int64_t history_id = 0;
    quint64 offset = 0;
    RunMetrics stored;
    if (history_) {
        if (const Result<int64_t> before = history_->find_log_run(profile, path); before.ok()) {
            if (const int shown = monitor_->run_for_history(*before)) monitor_->remove_run(shown);
        }
        if (const Result<int64_t> id = history_->record_remote_log(profile, path, name); id.ok()) {
            const Result<RunRecord> record = history_->run(*id);
            Result<RunMetrics> metrics = history_->load_metrics(*id);
            if (record.ok() && metrics.ok()) {
                history_id = *id;
                offset = record->log_offset;
                stored = std::move(*metrics);
            }
        }
    }
    const int key = monitor_->watch_run(name, history_id, std::move(stored));
    monitor_->set_state(key, tr("following"));
    const int follow_id = session->follow(path, offset);
    // Live for as long as it is shown: removing it from the monitor stops the polling.
    connect(
        session, &ClusterSession::follow_batch, monitor_,
        [this, key, follow_id, history_id, stop_stored = false](const FollowBatch& batch) mutable {
            if (batch.follow_id != follow_id) return;
            monitor_->feed(key, batch);
            const MonitorRun* run = monitor_->run(key);
            if (history_ && history_id != 0 && run != nullptr && run->metrics.run_stop_ms && !stop_stored) {
                stop_stored = true;  // the log says how it ended: state, start and end in the history
                history_->finish_opened_log(history_id, run->metrics);
                runs_->reload();
            }
        });
    connect(monitor_, &MonitorWidget::run_removed, session,
            [this, session, key, follow_id, history_id](int removed) {
                if (removed != key) return;
                session->stop_follow(follow_id);
                if (history_ && history_id != 0) {
                    if (const Result<RunRecord> r = history_->run(history_id);
                        r.ok() && r->state == RunState::kFollowing)
                        history_->set_state(history_id, RunState::kIncomplete);
                }
            });
    runs_->reload();
    show_page(kMonitorPage);
    return key;
}

Status MainWindow::start_image_task(ImageAction action, const QString& image) {
    const std::optional<remote::ClusterProfile> target = editor_->target_profile();
    if (!target) return Status::Error("the run goes to This computer, which has no build host");
    if (image_job_ != nullptr && image_job_->running()) return Status::Error("an image job is running");
    ImageTask task;
    task.action = action;
    task.config = editor_->document().config();
    task.image = image.toStdString();
    if (action == ImageAction::kImport) task.sqsh = task.config.slurm.container_image;
    task.source_root = resource_root_.toStdString();
    delete image_job_;  // the last one has finished
    image_job_ = new ImageJob(*target, make_gui_callbacks(this), clusters_->connector(), this);
    ContainerPanel* panel = editor_->container_panel();
    connect(image_job_, &ImageJob::output, panel, &ContainerPanel::append_output);
    connect(image_job_, &ImageJob::finished, this, [this, panel](bool ok, const QString& message) {
        panel->set_running(false);
        panel->show_result(ok, message);
        statusBar()->showMessage(message);
    });
    panel->set_running(true);
    image_job_->start(std::move(task));
    statusBar()->showMessage(tr("%1 %2 on %3...")
                                 .arg(action == ImageAction::kBuild ? tr("Building") : tr("Importing"), image,
                                      QString::fromStdString(target->name)));
    return Status::Ok();
}

}  // namespace slipway::app
