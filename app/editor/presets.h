// Run config presets: the ones shipped in resources/presets (the seeds' jobs, the demo) and the user's
// own, saved under <XDG data home>/slipway/presets. A preset's title and description live next to it in
// <name>.md (a "# Title" line, then one paragraph): the run config itself admits no unknown keys. A
// translated description is <name>.<language>.md (demo-tiny.ru.md).
#pragma once

#include <QString>
#include <QStringList>

#include "contract/run_config.h"

namespace slipway::app {

struct Preset {
    QString name;  // file name without .json
    QString path;
    bool user = false;
    QString title;        // from <name>.md; "" without one
    QString description;  // from <name>.md; "" without one
};

QString user_preset_dir();
// Shipped presets first (sorted), then the user's; a user preset with a shipped name comes second. The
// descriptions in `language` ("ru") where a <name>.<language>.md exists, else the English <name>.md.
QList<Preset> list_presets(const QString& resource_root, const QString& language = QString());

// The figures a person compares presets by, from the preset's config: model, what trains and the
// machines, e.g. "Llama-3.1-8B · LoRA rank 16 · 1 node × 4 GPUs · global batch 128 × 2048 tokens".
QString preset_figures(const RunConfig& config);

}  // namespace slipway::app
