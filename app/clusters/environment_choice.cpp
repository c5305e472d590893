// The guide's environment as run-config edits (see environment_choice.h).
#include "clusters/environment_choice.h"

namespace slipway::app {

std::vector<ConfigEdit> environment_edits(const EnvironmentChoice& choice) {
    return {{"/slurm/container_image", choice.image.trimmed().toStdString()},
            {"/slurm/partition", choice.partition.trimmed().toStdString()},
            {"/slurm/gpus_per_node", choice.gpus_per_node}};
}

Result<RunConfig> config_in_environment(const std::string& path, const EnvironmentChoice& choice) {
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
