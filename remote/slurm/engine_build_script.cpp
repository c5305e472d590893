// Renders the engine's build job (see engine_build_script.h): straight-line bash that passes shellcheck.
#include "remote/slurm/engine_build_script.h"

#include <sstream>
#include <vector>

#include "remote/slurm/job_environment.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {

Result<std::string> render_engine_build_script(const RunConfig& config, const ClusterProfile& profile,
                                               const EngineBuildInputs& inputs) {
    if (inputs.engine_dir.empty() || inputs.engine_dir[0] != '/' || inputs.bundle.empty() ||
        inputs.bundle[0] != '/')
        return Status::Error("the engine's folder and bundle must be absolute paths");
    Result<JobEnvironment> environment = job_environment(config, profile);
    if (!environment.ok()) return environment.status();
    const SlurmConfig& s = config.slurm;
    std::vector<std::string> directives = {"--job-name=slipway-engine-build", "--nodes=1", "--ntasks=1",
                                           "--time=01:00:00", "--output=build-%j.out"};
    if (s.gpus_per_node > 0) directives.push_back("--gres=gpu:1");
    if (s.cpus_per_task) directives.push_back("--cpus-per-task=" + std::to_string(*s.cpus_per_task));
    const std::pair<const char*, std::string> names[] = {
        {"--partition=", s.partition.empty() ? profile.default_partition : s.partition},
        {"--account=", s.account.empty() ? profile.default_account : s.account},
        {"--qos=", s.qos.empty() ? profile.default_qos : s.qos}};
    for (const auto& [flag, value] : names)
        if (!value.empty())
            directives.push_back(flag + value);  // validated Slurm names (run config, profile)

    Result<std::string> engine_dir = shell_quote(inputs.engine_dir, "engine folder");
    Result<std::string> bundle = shell_quote(inputs.bundle, "engine bundle");
    if (!engine_dir.ok()) return engine_dir.status();
    if (!bundle.ok()) return bundle.status();
    Result<std::string> environment_text = environment_lines(*environment, {"engine_dir"});
    if (!environment_text.ok()) return environment_text.status();

    std::ostringstream out;
    out << "#!/bin/bash\n";
    out << "# Slipway builds slipway-engine " << inputs.fingerprint.substr(0, 16)
        << " here, in the environment its runs use:\n";
    std::istringstream described(describe_environment(*environment));
    for (std::string line; std::getline(described, line);)
        out << "#   " << line << "\n";
    for (const std::string& d : directives)
        out << "#SBATCH " << d << "\n";
    out << "set -euo pipefail\n";
    out << "engine_dir=" << *engine_dir << "\n";
    out << "bundle=" << *bundle << "\n";
    out << "cd \"$engine_dir\"\n";
    out << *environment_text;
    out << "echo \"slipway: building the engine from $bundle on $(hostname)\"\n";
    out << "rm -rf src engine-manifest.json && mkdir src\n";
    out << "tar -xzf \"$bundle\" -C src --strip-components=1\n";
    out << "srun --nodes=1 --ntasks=1 ${container[@]+\"${container[@]}\"} bash \"$engine_dir/src/build.sh\" "
           "\"$engine_dir/src/build\"\n";
    out << "cp src/build/bin/slipway-engine slipway-engine.new && mv -f slipway-engine.new slipway-engine\n";
    out << "# Last: the manifest says the engine is ready.\n";
    out << "cp src/build/engine-manifest.json engine-manifest.json.new && "
           "mv -f engine-manifest.json.new engine-manifest.json\n";
    out << "echo \"slipway: engine ready: $engine_dir/slipway-engine\"\n";
    return out.str();
}

}  // namespace slipway::remote
