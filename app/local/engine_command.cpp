// Finding slipway-engine and its command line.
#include "local/engine_command.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QThread>

namespace slipway::app {

QString find_engine_binary() {
    // An explicit choice first (tests, or an engine built elsewhere).
    if (const QString chosen = qEnvironmentVariable("SLIPWAY_ENGINE"); !chosen.isEmpty()) return chosen;
    const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/slipway-engine");
    if (QFileInfo(beside).isExecutable()) return beside;
    return QStandardPaths::findExecutable(QStringLiteral("slipway-engine"));
}

QStringList engine_arguments(const QString& run_json, int nproc, const QStringList& overrides, int cores) {
    if (cores <= 0) cores = QThread::idealThreadCount();
    const int ranks = kEngineHasLaunch ? std::max(1, nproc) : 1;
    const int threads = std::max(1, cores / ranks);
    QStringList train = {QStringLiteral("train"), QStringLiteral("--threads"), QString::number(threads),
                         run_json};
    train += overrides;
    if (!kEngineHasLaunch) return train;
    return QStringList{QStringLiteral("launch"), QStringLiteral("--nproc"), QString::number(ranks),
                       QStringLiteral("--")} +
           train;
}

QString resource_root() {
    const QString app_dir = QCoreApplication::applicationDirPath();
    const QStringList candidates = {
        app_dir + QStringLiteral("/../.."),             // <source>/build/bin
        app_dir + QStringLiteral("/../share/slipway"),  // <prefix>/bin -> <prefix>/share/slipway
        QStringLiteral(SLIPWAY_SOURCE_DIR),             // the tree this binary was built from
        QDir::currentPath(),
    };
    for (const QString& dir : candidates) {
        if (QFileInfo::exists(dir + QStringLiteral("/resources/presets/demo-tiny.json"))) {
            return QDir(dir).canonicalPath();
        }
    }
    return QString();
}

}  // namespace slipway::app
