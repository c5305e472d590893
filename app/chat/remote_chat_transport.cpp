// RemoteChatTransport: start over the cluster's session, then a pump thread per process (see
// remote_chat_transport.h).
#include "chat/remote_chat_transport.h"

#include <QMetaObject>
#include <QTimer>

#include "clusters/cluster_session.h"
#include "remote/ssh/session.h"

namespace slipway::app {

RemoteChatTransport::RemoteChatTransport(ClusterSession* session, CommandOf command_of, QObject* parent)
    : ChatTransport(parent),
      session_(session),
      cluster_(QString::fromStdString(session->profile().name)),
      command_of_(std::move(command_of)) {
    connect(session_, &ClusterSession::process_started, this, &RemoteChatTransport::on_started);
    connect(session_, &QObject::destroyed, this, [this] {
        if (state_ == State::kStarting) finish(-1, replaced());
    });
}

RemoteChatTransport::~RemoteChatTransport() {
    stopping_ = true;
    join();  // the pump terminates the process on its way out
}

QString RemoteChatTransport::where() const {
    return tr("cluster %1 (srun)").arg(cluster_);
}

QString RemoteChatTransport::replaced() const {
    return tr("the connection to %1 was replaced (its profile changed or was removed): choose the run again")
        .arg(cluster_);
}

void RemoteChatTransport::start(const QStringList& arguments) {
    if (running()) return;
    join();
    const Result<std::string> command = command_of_(arguments);
    state_ = State::kStarting;
    stop_requested_ = false;
    if (!command.ok() || session_.isNull()) {
        const QString error = session_.isNull() ? replaced() : QString::fromStdString(command.error());
        QTimer::singleShot(0, this, [this, error] { finish(-1, error); });
        return;
    }
    command_ = QString::fromStdString(*command);
    {
        std::lock_guard<std::mutex> lock(pending_mutex_);
        pending_.clear();
    }
    request_ = session_->start_process(command_);
}

void RemoteChatTransport::on_started(int request, bool ok, const QString& error,
                                     const std::shared_ptr<remote::RemoteProcess>& process) {
    if (request != request_ || state_ != State::kStarting) return;  // not ours, or given up
    request_ = 0;
    if (!ok) {
        finish(-1, error);
        return;
    }
    if (stop_requested_) {
        (void)process->terminate();
        finish(-1, {});
        return;
    }
    state_ = State::kRunning;
    stopping_ = false;
    pump_ = std::thread([this, process] { pump(process); });
    emit started();
}

void RemoteChatTransport::write(const QByteArray& bytes) {
    if (!running()) return;
    std::lock_guard<std::mutex> lock(pending_mutex_);
    pending_.append(bytes.constData(), static_cast<std::size_t>(bytes.size()));
}

void RemoteChatTransport::stop() {
    if (state_ == State::kStarting) {
        stop_requested_ = true;  // terminated as soon as it arrives
        return;
    }
    if (state_ == State::kRunning) stopping_ = true;
}

// On the pump thread: everything it learns goes to the transport's thread by queued calls, which Qt drops
// if the transport is gone (its destructor joins this thread first anyway).
void RemoteChatTransport::pump(std::shared_ptr<remote::RemoteProcess> process) {
    auto post = [this](std::function<void()> call) {
        QMetaObject::invokeMethod(this, std::move(call), Qt::QueuedConnection);
    };
    for (;;) {
        if (stopping_) {
            (void)process->terminate();
            post([this] { finish(-1, {}); });
            return;
        }
        std::string bytes;
        {
            std::lock_guard<std::mutex> lock(pending_mutex_);
            bytes.swap(pending_);
        }
        if (!bytes.empty()) {
            if (Status s = process->write_stdin(bytes); !s.ok()) {
                const QString error = QString::fromStdString(s.message());
                post([this, error] { finish(-1, error); });
                return;
            }
        }
        Result<remote::RemoteProcess::Output> out = process->read_available(std::chrono::milliseconds(100));
        if (!out.ok()) {
            const QString error = QString::fromStdString(out.error());
            post([this, error] { finish(-1, error); });
            return;
        }
        if (!out->out.empty()) {
            QByteArray b = QByteArray::fromStdString(out->out);
            post([this, b] { emit output(b); });
        }
        if (!out->err.empty()) {
            QByteArray b = QByteArray::fromStdString(out->err);
            post([this, b] { emit diagnostics(b); });
        }
        if (process->exited()) {
            const int code = process->exit_status();
            post([this, code] { finish(code, {}); });
            return;
        }
    }
}

void RemoteChatTransport::finish(int exit_code, const QString& error) {
    if (state_ == State::kIdle) return;
    state_ = State::kIdle;
    join();
    emit ended(exit_code, error);
}

void RemoteChatTransport::join() {
    if (pump_.joinable()) pump_.join();
}

}  // namespace slipway::app
