// ImageJob: one image build or import on a ClusterJob's worker thread (see image_job.h).
#include "images/image_job.h"

namespace slipway::app {

void ImageJob::start(ImageTask task) {
    task.remote_workdir = profile().remote_workdir;
    task.job.stop_requested = [this] { return stop_requested(); };  // checked between polls of the remote log
    const QString what = task.action == ImageAction::kBuild ? tr("build") : tr("import");
    start_work(
        [what](const QString& error) { return tr("The %1 did not start: %2").arg(what, error); },
        [this, task, what](remote::Session& session) -> Done {
            const Result<ImageTaskOutcome> done =
                run_image_task(session, task, [this](const std::string& line) { queue_line(line); });
            const QString host = QString::fromStdString(profile().host);
            if (!done.ok())
                return {false, tr("The %1 stopped: %2").arg(what, QString::fromStdString(done.error()))};
            if (done->exit_status != 0)
                return {false, tr("The %1 failed (exit %2); its log on %3 is %4")
                                   .arg(what)
                                   .arg(done->exit_status)
                                   .arg(host, QString::fromStdString(done->log_path))};
            if (task.action == ImageAction::kBuild)
                return {true, tr("Built %1 on %2.").arg(QString::fromStdString(task.image), host)};
            return {true,
                    tr("Imported %1 into %2 on %3.")
                        .arg(QString::fromStdString(task.image), QString::fromStdString(task.sqsh), host)};
        });
}

}  // namespace slipway::app
