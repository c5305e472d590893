// "Export GGUF..." of the Runs and Chat pages: `slipway-engine export gguf` on a model (and LoRA adapter)
// that is on this computer, as a process the window watches. A cluster run's model must be fetched first;
// that is said by name, before anything starts.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

#include "chat/chat_session.h"
#include "contract/status.h"

namespace slipway::app {

class GgufExport : public QObject {
    Q_OBJECT

public:
    explicit GgufExport(QObject* parent = nullptr);

    // The storage types `export gguf --type` takes, the most useful first.
    static QStringList types();
    // The target's folders are on this computer (a model folder with config.json; the adapter, if any).
    [[nodiscard]] static Status check_local(const ChatTarget& target);
    // `export gguf --model ... [--adapter ...] --out OUT --type TYPE`.
    static QStringList arguments(const ChatTarget& target, const QString& out, const QString& type);

    // Starts the engine; finished() follows. Errors: a folder not here, no engine, one export running.
    [[nodiscard]] Status start(const ChatTarget& target, const QString& out, const QString& type);
    bool running() const { return process_.state() != QProcess::NotRunning; }

signals:
    // `message`: the engine's summary line on success, its error otherwise.
    void finished(bool ok, const QString& message);

private:
    QProcess process_;
    QString out_;
};

}  // namespace slipway::app
