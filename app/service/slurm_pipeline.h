// A pipeline (contract/pipeline.h) submitted to a Slurm cluster through the run service: a chain of jobs,
// each waiting for the one before it (--dependency=afterok), every step a row of the run store. Training
// steps go through SlurmExecutor::submit (their usual sbatch script, plus the dependency); the other steps
// run slipway-engine from a step script in <pipeline folder>/steps/<name>/, their relative inputs uploaded
// into <pipeline folder>/inputs/. A step that cannot be submitted takes back the jobs already queued: they
// would wait for a chain that never finishes. `slipway submit PIPELINE.json` and the Adaptation page call
// it; each step is told as it is queued.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "contract/pipeline.h"
#include "contract/status.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/slurm/pipeline_sbatch.h"
#include "service/slurm_executor.h"

namespace slipway::app {

struct PipelineSubmitRequest {
    std::string input_root;     // the local folder relative inputs are relative to
    std::string engine_binary;  // the local slipway-engine, uploaded once where the profile says desktop
    std::string engine_bundle;  // the engine bundle, built on the cluster where the profile says build
    std::function<void(const std::string&)> progress;  // hears how the engine's build goes
    // Asked between steps: true stops the submission (the jobs already queued are taken back).
    std::function<bool()> stop_requested;
};

struct QueuedStep {
    size_t index = 0;
    std::string step;
    std::string kind;
    bool training = false;
    std::string job_id;
    std::string after;  // the job it waits for; empty for the first
    std::string run_id;
    int64_t store_id = 0;       // its row; 0 when the store could not record it
    std::string store_problem;  // why the store could not record it; empty when it did
};

struct SubmittedPipeline {
    std::string pipeline_id;
    std::string run_dir;  // the pipeline's folder on the login node
    std::vector<QueuedStep> steps;
};

[[nodiscard]] Result<SubmittedPipeline> submit_pipeline(
    SlurmExecutor& executor, const Pipeline& pipeline, const PipelineSubmitRequest& request,
    const std::function<void(const QueuedStep&)>& on_step);

// How CPU steps start the engine on `profile`: after its setup lines, in its runtime with the image of the
// first training step that names one (with its mounts and the runs folder); the engine built on the cluster
// (its folder a placeholder until submit_pipeline finds it), the image's, or this computer's deployed into
// the pipeline's folder (`run_dir`).
remote::StepScriptInputs cpu_step_inputs(const Pipeline& pipeline, const remote::ClusterProfile& profile,
                                         const std::string& run_dir, const std::string& runs_dir);

}  // namespace slipway::app
