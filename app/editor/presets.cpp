// Preset discovery, their descriptions and key figures.
#include "editor/presets.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

namespace slipway::app {
namespace {

// The translation context of the key figures ("Presets").
struct Presets {
    Q_DECLARE_TR_FUNCTIONS(Presets)
};

// Reads "# Title\n\nParagraph..." from <name>.<language>.md next to the preset, else from <name>.md.
void read_description(Preset& preset, const QString& language) {
    const QString stem = QFileInfo(preset.path).path() + QLatin1Char('/') + preset.name;
    QFile file(stem + QLatin1Char('.') + language + QStringLiteral(".md"));
    if (language.isEmpty() || !file.exists()) file.setFileName(stem + QStringLiteral(".md"));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return;
    QStringList paragraph;
    for (const QString& raw : QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'))) {
        const QString line = raw.trimmed();
        if (line.startsWith(QLatin1String("# ")) && preset.title.isEmpty()) {
            preset.title = line.mid(2).trimmed();
        } else if (line.isEmpty()) {
            if (!paragraph.isEmpty()) break;  // one paragraph
        } else {
            paragraph << line;
        }
    }
    preset.description = paragraph.join(QLatin1Char(' '));
}

}  // namespace

QString user_preset_dir() {
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) +
           QStringLiteral("/slipway/presets");
}

QList<Preset> list_presets(const QString& resource_root, const QString& language) {
    QList<Preset> out;
    auto scan = [&out, &language](const QString& dir, bool user) {
        const QFileInfoList files =
            QDir(dir).entryInfoList({QStringLiteral("*.json")}, QDir::Files | QDir::Readable, QDir::Name);
        for (const QFileInfo& f : files) {
            Preset preset{f.completeBaseName(), f.absoluteFilePath(), user, {}, {}};
            read_description(preset, language);
            out.push_back(preset);
        }
    };
    if (!resource_root.isEmpty()) scan(resource_root + QStringLiteral("/resources/presets"), false);
    scan(user_preset_dir(), true);
    return out;
}

QString preset_figures(const RunConfig& config) {
    QStringList parts;
    // The model folder's name says which model ("Llama-3.1-8B"); a generic one ("model") its parent too.
    const QStringList path =
        QString::fromStdString(config.model.path).split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (!path.isEmpty()) {
        const bool generic =
            path.size() > 1 && path.last().compare(QLatin1String("model"), Qt::CaseInsensitive) == 0;
        parts << (generic ? path.mid(path.size() - 2).join(QLatin1Char('/')) : path.last());
    }
    const AdapterConfig& adapter = config.adapter;
    if (adapter.uses_lora()) {
        parts << Presets::tr("LoRA rank %1").arg(adapter.r);
    } else if (adapter.method == "embeddings") {
        parts << Presets::tr("embeddings only");
    } else {
        parts << Presets::tr("full fine-tune");
    }
    const SlurmConfig& slurm = config.slurm;
    const QString per_node =
        slurm.gpus_per_node > 0
            ? Presets::tr("%n GPU(s)", nullptr, static_cast<int>(slurm.gpus_per_node))
            : Presets::tr("%n CPU rank(s)", nullptr, static_cast<int>(config.tasks_per_node()));
    parts << Presets::tr("%n node(s)", nullptr, static_cast<int>(slurm.nodes)) + QStringLiteral(" × ") +
                 per_node;
    parts << Presets::tr("global batch %1 × %2 tokens")
                 .arg(config.global_batch_size())
                 .arg(config.data.block_size);
    return parts.join(QStringLiteral(" · "));
}

}  // namespace slipway::app
