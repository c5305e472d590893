// ClusterJob: the worker thread of one long task on a cluster (see cluster_job.h).
#include "clusters/cluster_job.h"

#include <QMetaObject>
#include <QThread>

#include "clusters/cluster_connect.h"
#include "remote/ssh/libssh_session.h"

namespace slipway::app {
namespace {

std::atomic<int> next_job_id{1};

}  // namespace

ClusterJob::ClusterJob(remote::ClusterProfile profile, remote::SessionCallbacks callbacks,
                       ClusterSession::Connector connector, QObject* parent)
    : QObject(parent),
      profile_(std::move(profile)),
      callbacks_(std::move(callbacks)),
      connector_(std::move(connector)),
      id_(next_job_id++) {}

ClusterJob::~ClusterJob() {
    stop_ = true;
    if (thread_) thread_->wait();
}

void ClusterJob::start_work(std::function<QString(const QString& error)> connect_failed,
                            std::function<Done(remote::Session&)> work) {
    if (running_ || thread_) return;
    running_ = true;
    thread_.reset(QThread::create([this, connect_failed, work] {
        queue_line(tr("connecting to %1...").arg(QString::fromStdString(profile_.host)).toStdString());
        Result<std::unique_ptr<remote::Session>> session =
            connector_ ? connector_(profile_, callbacks_)
                       : remote::connect_ssh(connect_options(profile_), callbacks_);
        const Done done = session.ok() ? work(**session)
                                       : Done{false, connect_failed(QString::fromStdString(session.error()))};
        QMetaObject::invokeMethod(
            this,
            [this, done] {
                flush();
                running_ = false;
                emit finished(done.ok, done.message);
            },
            Qt::QueuedConnection);
    }));
    thread_->setObjectName(QStringLiteral("slipway-job"));
    thread_->start();
}

void ClusterJob::queue_line(const std::string& line) {
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

void ClusterJob::flush() {
    QStringList lines;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        lines.swap(pending_);
    }
    if (!lines.isEmpty()) emit output(lines);
}

}  // namespace slipway::app
