// The sbatch scripts of a pipeline's chain on Slurm: each step waits for the one before it
// (--dependency=afterok:<job> with --kill-on-invalid-dep=yes, so a failed step cancels the rest instead of
// leaving them pending forever). Training steps keep their usual script (sbatch_script.h) with the two
// directives added; the other steps are small CPU jobs: one task, a few CPUs, no GPUs, running one
// slipway-engine command in the profile's environment. Every value that reaches the shell is quoted with
// shell_quote() or refused.
#pragma once

#include <string>
#include <vector>

#include "contract/pipeline.h"
#include "contract/status.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/slurm/job_environment.h"

namespace slipway::remote {

// "--dependency=afterok:<job>" and "--kill-on-invalid-dep=yes" for a step after `job_id`; none for the first
// step (empty id). A job id that is not one sbatch prints is refused.
Result<std::vector<std::string>> dependency_directives(const std::string& job_id);

struct StepScriptInputs {
    std::string pipeline_name;
    std::string step_dir;      // absolute remote folder; the job runs there and writes slurm-%j.out there
    std::string engine;        // absolute remote slipway-engine, or "slipway-engine" inside a container
    std::string after_job_id;  // the previous step's job; empty for the first step
    // Where the engine runs: the profile's setup lines, then its runtime with the chain's image and mounts.
    // `runs_dir` (absolute: every step's folder and every run of the chain are below it) and `engine_dir` (an
    // engine built on the cluster; empty: none) are mounted at their own paths.
    JobEnvironment environment;
    std::string runs_dir;
    std::string engine_dir;
};

// The script of a non-training step (`resolved.engine_args`, stdout to `resolved.stdout_file` for eval).
Result<std::string> render_step_script(const PipelineStep& step, const ResolvedStep& resolved,
                                       const ClusterProfile& profile, const StepScriptInputs& inputs);

}  // namespace slipway::remote
