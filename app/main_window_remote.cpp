// MainWindow, the cluster half: submitting the editor's run to a cluster profile and opening a log that
// lives on a cluster (both handed to the RunTracker), and building or importing the run's image there.
#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QInputDialog>
#include <QMessageBox>
#include <QStatusBar>

#include "chat/chat_transport.h"
#include "chat/remote_chat_transport.h"
#include "chat/run_chat_target.h"
#include "clusters/cluster_dialogs.h"
#include "clusters/cluster_session.h"
#include "clusters/remote_browser.h"
#include "clusters_page.h"
#include "core/install_paths.h"
#include "editor/container_panel.h"
#include "editor/run_editor.h"
#include "history/run_history.h"
#include "images/image_job.h"
#include "main_window.h"
#include "monitor/monitor_widget.h"
#include "remote/slurm/chat_srun.h"
#include "runs/run_tracker.h"

namespace slipway::app {

Result<ChatTransport*> MainWindow::chat_transport(const StoredRun* run) {
    if (run == nullptr || run->cluster == kLocalCluster) {
        const QString engine = QFile::decodeName(find_engine_binary().c_str());
        if (engine.isEmpty())
            return Status::Error("no slipway-engine found (next to slipway, on PATH, or $SLIPWAY_ENGINE)");
        return static_cast<ChatTransport*>(new LocalChatTransport(engine));
    }
    ClusterSession* session = sessions_.session(run->cluster);
    if (session == nullptr)
        return Status::Error("run \"" + run->name + "\": no cluster profile named \"" + run->cluster + "\"");
    if (run->remote_dir.empty())
        return Status::Error("run \"" + run->name + "\" has no run folder on " + run->cluster);
    const Result<RunConfig> stored = stored_run_config(*run);
    if (!stored.ok()) return stored.status();
    const RunConfig config = *stored;
    const remote::ClusterProfile profile = session->profile();
    const std::string run_dir = run->remote_dir;
    auto command_of = [config, profile, run_dir](const QStringList& arguments) {
        std::vector<std::string> args;
        for (const QString& a : arguments)
            args.push_back(a.toStdString());
        return remote::render_chat_srun(config, profile, run_dir, std::move(args));
    };
    return static_cast<ChatTransport*>(new RemoteChatTransport(session, command_of));
}

Result<int> MainWindow::submit_remote(const QString& profile) {
    const RunDocument& doc = editor_->document();
    if (!doc.valid())
        return Result<int>::Error("the run config has problems:\n" + format_problems(doc.problems()));
    const Result<int> key = tracker_->submit_cluster(doc.config(), profile);
    if (key.ok()) show_page(kMonitorPage);
    return key;
}

Result<int> MainWindow::submit_demo(const QString& profile, const EnvironmentChoice& choice) {
    if (const Status s = editor_->load_preset(QString::fromUtf8(kDemoPreset)); !s.ok()) return s;
    for (const auto& [pointer, value] : environment_edits(choice))
        editor_->edit(pointer, value);
    editor_->target_box()->setCurrentText(profile);
    return submit_remote(profile);
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
    const Result<int> key = tracker_->open_cluster_log(profile, path);
    if (key.ok()) show_page(kMonitorPage);
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
