// The guide's environment as run-config edits (see environment_choice.h).
#include "clusters/environment_choice.h"

#include "editor/presets.h"

namespace slipway::app {

std::vector<ConfigEdit> environment_edits(const EnvironmentChoice& choice) {
    return {{"/slurm/container_image", choice.image.trimmed().toStdString()},
            {"/slurm/partition", choice.partition.trimmed().toStdString()},
            {"/slurm/gpus_per_node", choice.gpus_per_node}};
}

Result<RunConfig> demo_in_environment(const QString& resource_root, const EnvironmentChoice& choice) {
    QString preset_path;
    for (const Preset& preset : list_presets(resource_root))
        if (!preset.user && preset.name == QString::fromUtf8(kDemoPreset)) preset_path = preset.path;
    if (preset_path.isEmpty())
        return Status::Error("no shipped preset " + std::string(kDemoPreset) + " under " +
                             resource_root.toStdString() + "/resources/presets");
    const std::string path = preset_path.toStdString();
    Result<nlohmann::json> read = read_json_file(path);
    if (!read.ok()) return read.status();
    nlohmann::json document = *read;
    for (const auto& [pointer, value] : environment_edits(choice))
        document[nlohmann::json::json_pointer(pointer)] = value;
    ParsedRunConfig parsed = parse_run_config(document);
    if (has_errors(parsed.problems)) return Status::Error(path + ": " + format_problems(parsed.problems));
    return parsed.config;
}

}  // namespace slipway::app
