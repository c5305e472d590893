// `slipway render sbatch|dockerfile RUN.json [--cluster NAME]`: the script or Dockerfile a run would use,
// on stdout, so it can be read, linted or used by hand.
#include <filesystem>

#include "cli/remote_connect.h"
#include "contract/run_config.h"
#include "remote/container/dockerfile.h"
#include "remote/deploy/engine_build.h"
#include "remote/slurm/sbatch_script.h"

namespace slipway::app {
namespace {

// The named profile, or one that fits the config (pyxis when it names a container image).
Result<remote::ClusterProfile> profile_for(RemoteCommands& c, const RunConfig& config) {
    if (!c.cluster.empty()) return profile_store(c).find(c.cluster);
    remote::ClusterProfile p;
    p.name = "default";
    p.host = "login";
    p.container =
        config.slurm.container_image.empty() ? remote::ContainerMode::kNone : remote::ContainerMode::kPyxis;
    return p;
}

}  // namespace

int run_render_sbatch(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<RunConfig> config = load_run_file(c.run_file);
    if (!config.ok()) {
        err << "slipway: " << config.error() << "\n";
        return 1;
    }
    Result<remote::ClusterProfile> profile = profile_for(c, *config);
    if (!profile.ok()) {
        err << "slipway: " << profile.error() << "\n";
        return 1;
    }
    remote::SbatchInputs inputs;
    if (remote::engine_source_of(*profile) == remote::EngineSource::kBuild) {
        // Which engine is known once the cluster is asked (the image file's size and mtime are in its name).
        inputs.engine_dir = remote::engine_dir_placeholder(*profile);
        inputs.engine = inputs.engine_dir + "/slipway-engine";
        inputs.engine_why =
            "Preview: the engine built on the cluster for this environment; `slipway submit` (or `slipway "
            "engine "
            "build`) fills in its folder.";
    }
    Result<std::string> script = remote::render_sbatch_script(*config, *profile, inputs);
    if (!script.ok()) {
        err << "slipway: " << script.error() << "\n";
        return 1;
    }
    out << *script;
    return 0;
}

int run_render_dockerfile(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<RunConfig> config = load_run_file(c.run_file);
    if (!config.ok()) {
        err << "slipway: " << config.error() << "\n";
        return 1;
    }
    std::optional<remote::NgcCatalogue> catalogue;
    const std::string root = resource_root();
    if (!root.empty()) {
        Result<remote::NgcCatalogue> loaded =
            remote::load_ngc_catalogue(root + "/resources/containers/ngc-pytorch.json");
        if (!loaded.ok()) {
            err << "slipway: " << loaded.error() << "\n";
            return 1;
        }
        catalogue = std::move(*loaded);
    }
    remote::DockerfileOptions options;
    options.catalogue = catalogue ? &*catalogue : nullptr;
    Result<std::string> text = remote::render_dockerfile(*config, options);
    if (!text.ok()) {
        err << "slipway: " << text.error() << "\n";
        return 1;
    }
    out << *text;
    return 0;
}

}  // namespace slipway::app
