// The environment a job's steps run in, as bash lines of its script: the profile's env_setup lines, then
// `container=(...)`, the words that go between `srun <options>` and the command. Pyxis takes srun options
// (--container-image, --container-mounts, --container-workdir); apptainer and singularity take a command
// prefix (`apptainer exec --nv --bind ... IMAGE`); bare srun takes none. The run's sbatch script and the
// engine's build job both start their steps this way, so the engine is built where it runs.
#pragma once

#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "remote/slurm/cluster_profile.h"

namespace slipway::remote {

struct JobEnvironment {
    ContainerMode runtime = ContainerMode::kNone;
    std::string image;                // the run's /slurm/container_image; empty on bare srun
    std::vector<std::string> mounts;  // the run's /slurm/container_mounts ("src:dst")
    std::string workdir;              // /slurm/container_workdir; empty: the first mounted folder
    std::vector<std::string> setup;   // the profile's env_setup lines
    bool gpus = false;                // the steps use GPUs (apptainer's --nv)
};

// The run's environment on this cluster. Fails when the run names an image and the profile runs bare srun.
Result<JobEnvironment> job_environment(const RunConfig& config, const ClusterProfile& profile);

// The script lines: the setup lines, then `container=(...)`. `mounted` names shell variables holding
// absolute folders the steps read and write (run_dir, engine_dir): each is mounted at its own path, and
// the script stops with a clear message when one holds ',' or ':' (a mount list cannot).
Result<std::string> environment_lines(const JobEnvironment& environment,
                                      const std::vector<std::string>& mounted);

// The profile's setup lines as a script block (nounset off while the site's scripts run); "" for none.
std::string setup_block(const std::vector<std::string>& setup);

// The same container as words for a command line (chat's srun): pyxis's flags or apptainer's exec prefix,
// each of `folders` (absolute, without ',' or ':') mounted at its own path; none on bare srun.
Result<std::vector<std::string>> container_words(const JobEnvironment& environment,
                                                 const std::vector<std::string>& folders);

// What the environment is, for the build's fingerprint and the script's comment: the runtime, the image
// and the setup lines, one per line.
std::string describe_environment(const JobEnvironment& environment);

}  // namespace slipway::remote
