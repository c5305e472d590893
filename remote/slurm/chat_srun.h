// The command that runs a chat's generator on a cluster as a short Slurm job: `srun` with the run's
// resources (partition, account, qos, time, one GPU when the run had GPUs) starts
// `slipway-engine generate ... --prompts - --stream` on one task; srun forwards the SSH channel's stdin to
// it and its output back, so the conversation streams over the login session and nothing listens on a port.
#pragma once

#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "remote/slurm/cluster_profile.h"

namespace slipway::remote {

// `config` is the run config as the job saw it (remote paths), `run_dir` the run's folder on the cluster
// (absolute): the engine deployed there runs it under bare srun, the image's under pyxis (the run folder
// mounted at the same path). `engine_args` follow the engine (generate ...); with GPUs, `--device cuda` is
// added unless they name a device. Every value is quoted with shell_quote(); Slurm values with spaces or
// control characters are refused, naming the field.
[[nodiscard]] Result<std::string> render_chat_srun(const RunConfig& config, const ClusterProfile& profile,
                                                   const std::string& run_dir,
                                                   std::vector<std::string> engine_args);

}  // namespace slipway::remote
