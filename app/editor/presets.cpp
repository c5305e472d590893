// Preset discovery.
#include "editor/presets.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace slipway::app {

QString user_preset_dir() {
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) +
           QStringLiteral("/slipway/presets");
}

QList<Preset> list_presets(const QString& resource_root) {
    QList<Preset> out;
    auto scan = [&out](const QString& dir, bool user) {
        const QFileInfoList files =
            QDir(dir).entryInfoList({QStringLiteral("*.json")}, QDir::Files | QDir::Readable, QDir::Name);
        for (const QFileInfo& f : files)
            out.push_back({f.completeBaseName(), f.absoluteFilePath(), user});
    };
    if (!resource_root.isEmpty()) scan(resource_root + QStringLiteral("/resources/presets"), false);
    scan(user_preset_dir(), true);
    return out;
}

}  // namespace slipway::app
