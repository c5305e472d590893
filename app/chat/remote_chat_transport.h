// RemoteChatTransport: the chat's generator on a cluster. The command (render_chat_srun: srun with the
// run's resources around slipway-engine generate) starts over the cluster's SSH session; a pump thread
// then writes the requests to the channel's stdin and reads the streamed lines back, each call a short
// step under the session's lock, so the cluster's other work (polls, follows) goes on meanwhile. Nothing
// listens on a port. Stop sends the srun process SIGTERM over the channel, which ends its job.
#pragma once

#include <QPointer>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "chat/chat_transport.h"
#include "contract/status.h"

namespace slipway::remote {
class RemoteProcess;
}

namespace slipway::app {

class ClusterSession;

class RemoteChatTransport : public ChatTransport {
    Q_OBJECT

public:
    // The remote command line for the engine's arguments (render_chat_srun with the run's config).
    using CommandOf = std::function<Result<std::string>(const QStringList& engine_arguments)>;

    RemoteChatTransport(ClusterSession* session, CommandOf command_of, QObject* parent = nullptr);
    ~RemoteChatTransport() override;

    void start(const QStringList& arguments) override;
    void write(const QByteArray& bytes) override;
    void stop() override;
    bool running() const override { return state_ != State::kIdle; }
    QString where() const override;
    // The last command started (tests, the status line).
    const QString& command() const { return command_; }

private:
    enum class State { kIdle, kStarting, kRunning };
    void on_started(int request, bool ok, const QString& error,
                    const std::shared_ptr<remote::RemoteProcess>& process);
    void pump(std::shared_ptr<remote::RemoteProcess> process);
    void finish(int exit_code, const QString& error);
    void join();
    QString replaced() const;  // why a start cannot happen once the session is gone

    // Gone when its profile changed or was removed (ClusterSessions makes a new one): the next start then
    // fails, asking to choose the run again; a running process ends with its connection.
    QPointer<ClusterSession> session_;
    QString cluster_;  // the profile's name
    CommandOf command_of_;
    QString command_;
    State state_ = State::kIdle;
    int request_ = 0;              // the start_process request waited for
    bool stop_requested_ = false;  // stop() while starting

    std::thread pump_;
    std::atomic<bool> stopping_{false};
    std::mutex pending_mutex_;
    std::string pending_;  // stdin bytes not yet written
};

}  // namespace slipway::app
