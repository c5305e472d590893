// LocalChatTransport: slipway-engine on this computer through QProcess (see chat_transport.h).
#include "chat/chat_transport.h"

#include <QProcess>
#include <QTimer>

namespace slipway::app {

LocalChatTransport::LocalChatTransport(QString engine, QObject* parent)
    : ChatTransport(parent), engine_(std::move(engine)), process_(new QProcess(this)) {
    connect(process_, &QProcess::started, this, &ChatTransport::started);
    connect(process_, &QProcess::readyReadStandardOutput, this,
            [this] { emit output(process_->readAllStandardOutput()); });
    connect(process_, &QProcess::readyReadStandardError, this,
            [this] { emit diagnostics(process_->readAllStandardError()); });
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart || reported_) return;
        reported_ = true;
        emit ended(-1, tr("cannot start %1: %2").arg(engine_, process_->errorString()));
    });
    connect(process_, qOverload<int, QProcess::ExitStatus>(&QProcess::finished), this,
            [this](int code, QProcess::ExitStatus status) {
                if (reported_) return;
                reported_ = true;
                // What is still buffered comes first.
                if (const QByteArray out = process_->readAllStandardOutput(); !out.isEmpty())
                    emit output(out);
                if (const QByteArray err = process_->readAllStandardError(); !err.isEmpty())
                    emit diagnostics(err);
                const bool crashed = status == QProcess::CrashExit;
                emit ended(crashed ? -1 : code, crashed ? process_->errorString() : QString());
            });
}

LocalChatTransport::~LocalChatTransport() {
    if (process_->state() == QProcess::NotRunning) return;
    reported_ = true;  // nobody listens any more
    process_->closeWriteChannel();
    process_->terminate();
    if (!process_->waitForFinished(3000)) {
        process_->kill();
        process_->waitForFinished(2000);
    }
}

void LocalChatTransport::start(const QStringList& arguments) {
    if (running()) return;
    reported_ = false;
    process_->start(engine_, arguments);
}

void LocalChatTransport::write(const QByteArray& bytes) {
    if (running()) process_->write(bytes);
}

void LocalChatTransport::stop() {
    if (!running()) return;
    process_->terminate();
    QTimer::singleShot(3000, process_, [p = process_] {
        if (p->state() != QProcess::NotRunning) p->kill();
    });
}

bool LocalChatTransport::running() const {
    return process_->state() != QProcess::NotRunning;
}

QString LocalChatTransport::where() const {
    return tr("This computer");
}

}  // namespace slipway::app
