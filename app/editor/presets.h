// Run config presets: the ones shipped in resources/presets (the seeds' jobs, the demo) and the user's
// own, saved under <XDG data home>/slipway/presets.
#pragma once

#include <QString>
#include <QStringList>

namespace slipway::app {

struct Preset {
    QString name;  // file name without .json
    QString path;
    bool user = false;
};

QString user_preset_dir();
// Shipped presets first (sorted), then the user's; a user preset with a shipped name comes second.
QList<Preset> list_presets(const QString& resource_root);

}  // namespace slipway::app
