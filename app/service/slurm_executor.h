// The run service on a Slurm cluster, over one SSH session: submitting a run config, asking every job of
// the cluster with one squeue (the watcher), and each submitted run's job: its state, follow, cancel and
// fetch. Whatever Slurm says of a run goes into the run store, written by the caller's thread (the CLI's,
// or the app's cluster worker): a submission writes its row once per state change (submitting, then
// pending with its job or failed with the reason). Qt-free: `slipway submit|status|follow|cancel|fetch` and
// the app's ClusterSession are its two callers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "remote/deploy/deploy.h"
#include "remote/deploy/job_nodes.h"
#include "remote/deploy/run_follow.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/slurm/slurm_client.h"
#include "remote/ssh/session.h"
#include "service/run_store.h"

namespace slipway::app {

struct SubmitRequest {
    RunConfig config;
    std::string input_root;  // the local folder relative input paths are relative to
    std::string
        engine_binary;  // the local slipway-engine, uploaded where the profile's engine_source is desktop
    std::string engine_bundle;  // the engine bundle, built on the cluster where it is build
    std::string run_id;         // empty: made from the config's name
    std::function<void(const std::string&)> progress;  // hears how the engine's build goes
};

struct Submission {
    StoredRun run;  // pending, with its job; its id is 0 when the store could not record it
    remote::Deployment deployment;
    std::string test_only;  // Slurm's answer to the pre-flight
    // Why the store could not record the run (the job was submitted all the same); empty when it did.
    std::string store_problem;
};

// One job's answer to a poll.
struct JobAnswer {
    std::string job_id;
    Result<remote::JobInfo> info = Status::Error("not asked");
    // A job running on several nodes: each node's Slurm state (empty otherwise, or when sinfo failed).
    std::vector<remote::NodeState> nodes;
};

struct FetchedRun {
    std::string destination;
    size_t files = 0;
    uintmax_t bytes = 0;
};

// The row a submission fills, made before anything is uploaded (state submitting): a submission that
// fails is listed with its reason. The run id is made here when `run_id` is empty. A store that cannot add
// the row does not stop the submission: the row's id is 0, `problem` says why, and sbatch's answer makes
// the row then if the store can.
StoredRun begin_submission(RunStore& store, const RunConfig& config, const std::string& cluster,
                           std::string run_id, std::string& problem);
// The submission failed before Slurm had a job: the row says why ("submit: <why>").
void fail_submission(RunStore& store, StoredRun& run, const std::string& why);
// Slurm's word for a job, stored as its run's state (with the log's run_stop status when known: a job Slurm
// forgot whose run_stop said success completed); an ended run is never made live again.
[[nodiscard]] Status store_job_state(RunStore& store, int64_t row, const remote::JobInfo& job,
                                     const std::string& run_stop_status = {});

class SlurmExecutor;

// A submitted run's job on its cluster.
class SlurmJob {
public:
    const StoredRun& run() const { return run_; }

    // Slurm's state of the job (squeue, else scontrol, else sacct), stored. One answer has no end rule: a
    // job being requeued is stored as its passing FAILED (the watchers, JobWatch, wait for the end to count).
    [[nodiscard]] Result<remote::JobInfo> state();
    [[nodiscard]] Status cancel();
    // Follows the job's log and state to its end (remote::follow_run); every live state Slurm gives on the
    // way is stored, and the end once it counts (a requeue's passing FAILED is not).
    [[nodiscard]] Result<remote::RunFollowOutcome> follow(const remote::RunFollowOptions& options,
                                                          remote::RunFollowCallbacks callbacks);
    // The run's outputs (run.json, the script, slurm-*.out, output/, with checkpoints when asked) into
    // `destination` (empty: a folder named after the run id), over SFTP. A name from the server that would
    // leave the destination (absolute, "..") is skipped.
    [[nodiscard]] Result<FetchedRun> fetch(const std::string& destination, bool checkpoints);

private:
    friend class SlurmExecutor;
    SlurmJob(SlurmExecutor& executor, StoredRun run) : executor_(executor), run_(std::move(run)) {}

    SlurmExecutor& executor_;
    StoredRun run_;
};

class SlurmExecutor {
public:
    // `session` connected to the profile's login node; both outlive the executor.
    SlurmExecutor(remote::Session& session, remote::ClusterProfile profile, RunStore& store);

    const remote::ClusterProfile& profile() const { return profile_; }
    RunStore& store() { return store_; }
    remote::Session& session() { return session_; }
    remote::SlurmClient& slurm() { return slurm_; }

    // begin_submission, then deploy, pre-flight and sbatch; the row gets the job the moment sbatch answers.
    [[nodiscard]] Result<Submission> submit(const SubmitRequest& request);
    // The same for a row begin_submission made (its run id is the submission's; `store_problem`: what
    // begin_submission said).
    [[nodiscard]] Result<Submission> submit(const SubmitRequest& request, StoredRun row,
                                            std::string store_problem = {});

    // The watcher: every job's state with one squeue (one reconnect when the connection dropped), in the
    // order asked; with `node_states`, also the nodes of each job running on several nodes (one sinfo each).
    // Nothing is stored: callers apply their end rule first (JobEndRule), or store_job_state.
    std::vector<JobAnswer> ask(const std::vector<std::string>& job_ids, bool node_states = false);

    // The job of a stored run; an error when the run has no Slurm job.
    [[nodiscard]] Result<SlurmJob> job(const StoredRun& run);

private:
    remote::Session& session_;
    remote::ClusterProfile profile_;
    RunStore& store_;
    remote::SlurmClient slurm_;
};

}  // namespace slipway::app
