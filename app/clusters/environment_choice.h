// The environment a cluster's first runs use, as the Clusters page's engine guide asks for it: the image
// (under pyxis, apptainer or singularity), the partition and GPUs per node. One list of run-config edits
// says what it means, so that the engine built from the guide and the demo run submitted after it are in the
// same environment, hence the same engine fingerprint.
#pragma once

#include <QString>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/run_config.h"
#include "contract/status.h"

namespace slipway::app {

struct EnvironmentChoice {
    QString image;      // the image file on the cluster; empty on bare srun
    QString partition;  // empty: the profile's default, else Slurm's
    int gpus_per_node = 0;
};

using ConfigEdit = std::pair<std::string, nlohmann::json>;  // a JSON pointer and its value

// The edits that put a run config into `choice`'s environment.
std::vector<ConfigEdit> environment_edits(const EnvironmentChoice& choice);

// The run config file at `path` (the demo preset, for the guide) in `choice`'s environment: what "Run the
// demo on this cluster" submits, and the run whose environment the guide builds the engine for. Errors name
// the file and the field.
Result<RunConfig> config_in_environment(const std::string& path, const EnvironmentChoice& choice);

// The preset the guide's demo run starts from.
inline constexpr const char* kDemoPreset = "demo-tiny";

}  // namespace slipway::app
