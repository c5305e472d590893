// The sbatch script of a run: #SBATCH resources from the run config's `slurm` section (and the cluster
// profile's defaults), the rendezvous master and port, one `slipway-engine prepare` task that tokenizes
// once, then `slipway-engine train` on every task, in the run's environment (job_environment.h).
#pragma once

#include <string>
#include <string_view>

#include "contract/run_config.h"
#include "contract/status.h"
#include "remote/slurm/cluster_profile.h"

namespace slipway::remote {

// How the script's log line starts when, after the time limit's checkpoint, it puts its job back in the
// queue: the job's end that follows is not the run's end (follow_run waits for the job to come back).
inline constexpr std::string_view kRequeueAnnouncement = "slipway: requeueing job ";

struct SbatchInputs {
    // Absolute remote folder of the run; the job starts there and writes slurm-%j.out there. Empty: the
    // folder sbatch was run in ($SLURM_SUBMIT_DIR).
    std::string run_dir;
    // The run config the engine reads, relative to run_dir (or absolute).
    std::string run_json = "run.json";
    // How the nodes start the engine. Empty: "slipway-engine" from the image's PATH under pyxis, and the
    // binary deployed into the run folder ($run_dir/slipway-engine) for bare srun.
    std::string engine;
    // Why this engine, for the script's comment ("built on this cluster for ..."); empty: none.
    std::string engine_why;
    // An absolute folder the engine lives in, outside the run folder (<workdir>/engines/<fingerprint>):
    // mounted into the container like the run folder. Empty: none.
    std::string engine_dir;
    // Run `slipway-engine prepare` on one task before training (seed 000: tokenize once, then train).
    bool prepare = true;
};

// The script text. Fails when the config does not validate, or when it asks for a container on a cluster
// whose profile says it has no pyxis. Every value that reaches the shell is quoted with shell_quote();
// #SBATCH values are the contract's validated Slurm names and numbers.
Result<std::string> render_sbatch_script(const RunConfig& config, const ClusterProfile& profile,
                                         const SbatchInputs& inputs = {});

// A Slurm job name from a run name: letters, digits, '.', '_' and '-' kept, anything else '_', at most 64
// characters (the run's own name, whatever it holds, stays intact in run.json).
std::string slurm_job_name(const std::string& run_name);

}  // namespace slipway::remote
