// How a ChatSession reaches its generator process: start it with the engine's arguments, write to its
// stdin, hear its stdout and stderr, end it. LocalChatTransport runs slipway-engine on this computer
// (QProcess); RemoteChatTransport (remote_chat_transport.h) runs it under srun over a cluster's SSH channel.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>

class QProcess;

namespace slipway::app {

// One generator process at a time; start() again after ended() starts a new one. Signals arrive on the
// thread that owns the transport (the GUI).
class ChatTransport : public QObject {
    Q_OBJECT

public:
    using QObject::QObject;

    // `arguments` follow the engine binary (generate_arguments()).
    virtual void start(const QStringList& arguments) = 0;
    virtual void write(const QByteArray& bytes) = 0;
    // Ends the process (and, on a cluster, its job); ended() follows.
    virtual void stop() = 0;
    virtual bool running() const = 0;
    // Where the process runs, for the page ("This computer", "cluster lomonosov").
    virtual QString where() const = 0;

signals:
    void started();
    void output(const QByteArray& bytes);       // stdout
    void diagnostics(const QByteArray& bytes);  // stderr
    // exit_code -1: it could not start, crashed, or the connection was lost (`error` says which).
    void ended(int exit_code, const QString& error);
};

class LocalChatTransport : public ChatTransport {
    Q_OBJECT

public:
    // `engine`: the slipway-engine binary (find_engine_binary()).
    explicit LocalChatTransport(QString engine, QObject* parent = nullptr);
    ~LocalChatTransport() override;

    void start(const QStringList& arguments) override;
    void write(const QByteArray& bytes) override;
    // SIGTERM, then SIGKILL if it is still there 3 s later.
    void stop() override;
    bool running() const override;
    QString where() const override;

private:
    QString engine_;
    QProcess* process_;
    bool reported_ = false;  // ended() was emitted for the current process
};

}  // namespace slipway::app
