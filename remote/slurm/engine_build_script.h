// The engine's build job: one task, in the run's own environment (job_environment.h), that unpacks the
// engine bundle into <engine_dir>/src, runs its build.sh against the environment's torch (and NCCL and nvcc
// where they are), and puts slipway-engine and engine-manifest.json in <engine_dir>. The manifest is
// written last: its presence says the engine is ready.
#pragma once

#include <string>

#include "contract/run_config.h"
#include "contract/status.h"
#include "remote/slurm/cluster_profile.h"

namespace slipway::remote {

struct EngineBuildInputs {
    std::string engine_dir;   // absolute: <workdir>/engines/<fingerprint>
    std::string bundle;       // absolute: the uploaded bundle (.tar.gz)
    std::string fingerprint;  // for the job's name and comment
};

// The script text, for the run `config` (its partition, account, qos, image and whether it uses GPUs: the
// build takes one GPU then, so build.sh finds the architectures with nvidia-smi) on `profile`.
Result<std::string> render_engine_build_script(const RunConfig& config, const ClusterProfile& profile,
                                               const EngineBuildInputs& inputs);

}  // namespace slipway::remote
