// One long task on a cluster, off the GUI thread (an image build, a doctor run): a worker thread opens its
// own SSH session to the profile's login host (the task can take an hour; the cluster's ClusterSession stays
// free for job state and log follows), runs the task's work on it, and hands its output lines to the GUI
// thread in batches by queued calls. Each job carries an id so that its receivers can drop a stale one's
// signals. Host keys, passphrases and 2FA codes are asked through the callbacks given (a second connection
// may ask for a 2FA code again). stop() asks the work to end (it polls stop_requested()); destroying a
// running job asks the same and waits for the work.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "clusters/cluster_session.h"

class QThread;

namespace slipway::app {

class ClusterJob : public QObject {
    Q_OBJECT

public:
    // `connector` empty: libssh with the profile's settings (as ClusterSession connects).
    ClusterJob(remote::ClusterProfile profile, remote::SessionCallbacks callbacks,
               ClusterSession::Connector connector = {}, QObject* parent = nullptr);
    ~ClusterJob() override;

    int id() const { return id_; }
    bool running() const { return running_; }
    const remote::ClusterProfile& profile() const { return profile_; }
    void stop() { stop_ = true; }

signals:
    void output(const QStringList& lines);
    // ok: the task did what it was for. `message` says what was done or why not.
    void finished(bool ok, const QString& message);

protected:
    struct Done {
        bool ok = false;
        QString message;
    };
    // Starts once: connects (a failure finishes with connect_failed(error)), then runs `work` on the worker
    // thread; output() and then finished() follow on this object's thread.
    void start_work(std::function<QString(const QString& error)> connect_failed,
                    std::function<Done(remote::Session&)> work);
    // For the work, on the worker thread.
    void queue_line(const std::string& line);
    bool stop_requested() const { return stop_.load(); }

private:
    void flush();

    remote::ClusterProfile profile_;
    remote::SessionCallbacks callbacks_;
    ClusterSession::Connector connector_;
    const int id_;
    std::unique_ptr<QThread> thread_;
    std::atomic<bool> stop_{false};
    bool running_ = false;
    std::mutex mutex_;
    QStringList pending_;  // lines the GUI has not taken yet (guarded by mutex_)
};

}  // namespace slipway::app
