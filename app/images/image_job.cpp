// ImageJob: the worker thread of one image build or import (see image_job.h).
#include "images/image_job.h"

#include <QMetaObject>
#include <QThread>

#include "cli/remote_connect.h"
#include "remote/ssh/libssh_session.h"

namespace slipway::app {

ImageJob::ImageJob(remote::ClusterProfile profile, remote::SessionCallbacks callbacks,
                   ClusterSession::Connector connector, QObject* parent)
    : QObject(parent),
      profile_(std::move(profile)),
      callbacks_(std::move(callbacks)),
      connector_(std::move(connector)) {}

ImageJob::~ImageJob() {
    stop_ = true;  // checked between polls of the remote log
    if (thread_) thread_->wait();
}

void ImageJob::start(ImageTask task) {
    if (running_ || thread_) return;
    running_ = true;
    task.remote_workdir = profile_.remote_workdir;
    task.job.stop_requested = [this] { return stop_.load(); };
    thread_.reset(QThread::create([this, task] { run(task); }));
    thread_->setObjectName(QStringLiteral("slipway-image"));
    thread_->start();
}

void ImageJob::run(const ImageTask& task) {
    const QString what = task.action == ImageAction::kBuild ? tr("build") : tr("import");
    auto finish = [this](bool ok, const QString& message) {
        QMetaObject::invokeMethod(
            this,
            [this, ok, message] {
                flush();
                running_ = false;
                emit finished(ok, message);
            },
            Qt::QueuedConnection);
    };
    queue_line(tr("connecting to %1...").arg(QString::fromStdString(profile_.host)).toStdString());
    Result<std::unique_ptr<remote::Session>> session =
        connector_ ? connector_(profile_, callbacks_)
                   : remote::connect_ssh(connect_options(profile_, SshCliOptions{}), callbacks_);
    if (!session.ok()) {
        finish(false, tr("The %1 did not start: %2").arg(what, QString::fromStdString(session.error())));
        return;
    }
    const Result<ImageTaskOutcome> done =
        run_image_task(**session, task, [this](const std::string& line) { queue_line(line); });
    if (!done.ok()) {
        finish(false, tr("The %1 stopped: %2").arg(what, QString::fromStdString(done.error())));
    } else if (done->exit_status != 0) {
        finish(false,
               tr("The %1 failed (exit %2); its log on %3 is %4")
                   .arg(what)
                   .arg(done->exit_status)
                   .arg(QString::fromStdString(profile_.host), QString::fromStdString(done->log_path)));
    } else {
        finish(true, task.action == ImageAction::kBuild
                         ? tr("Built %1 on %2.")
                               .arg(QString::fromStdString(task.image), QString::fromStdString(profile_.host))
                         : tr("Imported %1 into %2 on %3.")
                               .arg(QString::fromStdString(task.image), QString::fromStdString(task.sqsh),
                                    QString::fromStdString(profile_.host)));
    }
}

void ImageJob::queue_line(const std::string& line) {
    bool first = false;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        first = pending_.isEmpty();
        pending_ << QString::fromStdString(line);
    }
    // One queued call per burst: the lines that arrive before it runs go with it.
    if (first)
        QMetaObject::invokeMethod(
            this, [this] { flush(); }, Qt::QueuedConnection);
}

void ImageJob::flush() {
    QStringList lines;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        lines.swap(pending_);
    }
    if (!lines.isEmpty()) emit output(lines);
}

}  // namespace slipway::app
