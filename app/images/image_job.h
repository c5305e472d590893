// One image build or import on a cluster, off the GUI thread: a worker thread opens its own SSH session to
// the profile's login host (a build can take an hour; the cluster's ClusterSession stays free for job state
// and log follows), runs the ImageTask the CLI runs too, and hands its output lines to the GUI thread in
// batches by queued calls. Host keys, passphrases and 2FA codes are asked through the callbacks given (a
// second connection may ask for a 2FA code again). Destroying a running job stops following it; the build
// itself goes on, detached, on the host.
#pragma once

#include <QObject>
#include <QStringList>

#include <atomic>
#include <memory>
#include <mutex>

#include "clusters/cluster_session.h"
#include "images/image_tasks.h"

class QThread;

namespace slipway::app {

class ImageJob : public QObject {
    Q_OBJECT

public:
    // `connector` empty: libssh with the profile's settings (as ClusterSession connects).
    ImageJob(remote::ClusterProfile profile, remote::SessionCallbacks callbacks,
             ClusterSession::Connector connector = {}, QObject* parent = nullptr);
    ~ImageJob() override;

    // Runs `task` once; output() and then finished() follow on this object's thread.
    void start(ImageTask task);
    bool running() const { return running_; }
    const remote::ClusterProfile& profile() const { return profile_; }

signals:
    void output(const QStringList& lines);
    // ok: the remote build or import exited 0. `message` says what was done or why not.
    void finished(bool ok, const QString& message);

private:
    void run(const ImageTask& task);  // on the worker thread
    void queue_line(const std::string& line);
    void flush();

    remote::ClusterProfile profile_;
    remote::SessionCallbacks callbacks_;
    ClusterSession::Connector connector_;
    std::unique_ptr<QThread> thread_;
    std::atomic<bool> stop_{false};
    bool running_ = false;
    std::mutex mutex_;
    QStringList pending_;  // lines the GUI has not taken yet (guarded by mutex_)
};

}  // namespace slipway::app
