// Deploying a run to a cluster: <remote_workdir>/runs/<run-id>/ gets the resolved run.json (outputs go to
// its output/ folder), the sbatch script, the desktop's engine binary for a profile whose engine_source is
// "desktop", and the run's local inputs. Then submitting: the engine's build where the profile builds it
// (engine_build.h), sbatch --test-only, sbatch --parsable (after the build), and a local RunRecord.
//
// Input paths: a relative path in the run config names a local file (resolved against input_root) that
// Slipway uploads into the run folder's inputs/; an absolute path names a file already on the cluster.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "remote/deploy/engine_build.h"
#include "remote/deploy/run_record.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/slurm/slurm_client.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

struct DeployRequest {
    RunConfig config;
    std::string input_root;  // local folder that relative input paths are relative to
    ClusterProfile profile;
    std::string engine_binary;  // local slipway-engine, uploaded where engine_source is "desktop"
    std::string engine_bundle;  // local engine bundle (.tar.gz), built on the cluster where it is "build"
    std::string run_id;         // empty: make_run_id(config.name)
    // deploy_run: the engine built on the cluster (submit_run finds or queues it); the run waits for its
    // build job when one is queued.
    std::optional<EnginePlace> engine_place;
    // submit_run: hears how the engine's build goes while it waits for it.
    std::function<void(const std::string&)> progress;
};

struct Deployment {
    std::string run_id;
    std::string remote_dir;             // absolute: <remote_workdir>/runs/<run-id>
    RunConfig remote_config;            // the run.json as uploaded
    std::string script;                 // the sbatch script as uploaded
    std::vector<std::string> uploaded;  // remote paths, in upload order
};

// A relative input path (`pointer` names its field) must stay inside the local input folder's tree when it is
// mirrored under the run's inputs/: no "..".
[[nodiscard]] Status check_relative_input(const std::string& pointer, const std::string& path);

// "~/x", "x" -> "<remote $HOME>/x"; absolute paths unchanged. Asks the remote for $HOME once per call.
Result<std::string> resolve_remote_path(Session& session, const std::string& path);

Result<Deployment> deploy_run(Session& session, const DeployRequest& request);

// The files of a deployed run worth fetching, relative to its folder, found over SFTP (no shell, so any
// name is safe): run.json, run.sbatch, slurm-*.out and the files under output/ (without
// output/checkpoint-*/ unless `checkpoints`). inputs/, cache/ and the engine came from here and are not
// walked; symbolic links are skipped.
Result<std::vector<std::string>> list_run_outputs(Session& session, const std::string& run_dir,
                                                  bool checkpoints);

struct SubmittedRun {
    Deployment deployment;
    std::optional<EnginePlace> engine;  // where the profile builds its engine: which one, and its build
    SubmittedJob job;
    std::string test_only;  // Slurm's answer to the pre-flight
    RunRecord record;
};

// The engine build (where the profile builds its engine), deploy_run, the pre-flight, the submission (after
// the build job), the record saved in `records`, then the wait for the build: a failed build fails the
// submission with the compiler's first error, and Slurm drops the run (--kill-on-invalid-dep).
Result<SubmittedRun> submit_run(Session& session, SlurmClient& slurm, const DeployRequest& request,
                                const RunRecordSink& records);

}  // namespace slipway::remote
