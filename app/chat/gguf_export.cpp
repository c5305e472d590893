// GgufExport (gguf_export.h): one engine process at a time; its last lines become the message.
#include "chat/gguf_export.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "core/install_paths.h"

namespace slipway::app {

GgufExport::GgufExport(QObject* parent) : QObject(parent) {
    process_.setProcessChannelMode(QProcess::MergedChannels);
    connect(&process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        const QString output = QString::fromUtf8(process_.readAll()).trimmed();
        const QString last = output.section(QLatin1Char('\n'), -1);
        const bool ok = status == QProcess::NormalExit && code == 0 && QFileInfo::exists(out_);
        emit finished(
            ok, ok ? last
                   : (last.isEmpty() ? tr("slipway-engine export gguf failed (exit %1)").arg(code) : last));
    });
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            emit finished(false, tr("cannot start %1: %2").arg(process_.program(), process_.errorString()));
    });
}

QStringList GgufExport::types() {
    return {QStringLiteral("q8_0"), QStringLiteral("f16"), QStringLiteral("bf16"), QStringLiteral("f32")};
}

Status GgufExport::check_local(const ChatTarget& target) {
    if (!QFileInfo::exists(QDir(target.model_dir).filePath(QStringLiteral("config.json")))) {
        return Status::Error(
            target.model_dir.toStdString() +
            ": no model folder on this computer (a cluster run's model: fetch the run first, "
            "slipway fetch RUN --to DIR)");
    }
    if (!target.adapter_dir.isEmpty() && !QFileInfo(target.adapter_dir).isDir())
        return Status::Error(target.adapter_dir.toStdString() + ": no adapter folder on this computer");
    return Status::Ok();
}

QStringList GgufExport::arguments(const ChatTarget& target, const QString& out, const QString& type) {
    QStringList args = {QStringLiteral("export"), QStringLiteral("gguf"), QStringLiteral("--model"),
                        target.model_dir};
    if (!target.adapter_dir.isEmpty()) args << QStringLiteral("--adapter") << target.adapter_dir;
    return args << QStringLiteral("--out") << out << QStringLiteral("--type") << type;
}

Status GgufExport::start(const ChatTarget& target, const QString& out, const QString& type) {
    if (running()) return Status::Error("an export is running");
    if (Status s = check_local(target); !s.ok()) return s;
    const QString engine = QFile::decodeName(find_engine_binary().c_str());
    if (engine.isEmpty()) return Status::Error("slipway-engine not found (set SLIPWAY_ENGINE)");
    out_ = out;
    process_.start(engine, arguments(target, out, type));
    return Status::Ok();
}

}  // namespace slipway::app
