// SlurmClient: the Slurm commands Slipway runs on a login node over one Session (sbatch --test-only,
// sbatch --parsable, squeue -> scontrol -> sacct for a job's state, scancel, sinfo). Each command is built
// with shell_command(); a non-zero exit becomes an error carrying the command's stderr.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "contract/status.h"
#include "remote/slurm/slurm_parsers.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

class SlurmClient {
public:
    explicit SlurmClient(Session& session, std::chrono::milliseconds timeout = std::chrono::seconds(30))
        : session_(session), timeout_(timeout) {}

    // `sbatch --test-only SCRIPT` in `dir`: Slurm's answer ("Job 12 to start at ... on nodes ...") when the
    // job would be accepted, an error with sbatch's reason otherwise. Nothing is queued.
    Result<std::string> test_only(const std::string& dir, const std::string& script);
    // `sbatch --parsable SCRIPT` in `dir` (slurm-%j.out then lands in `dir`).
    Result<SubmittedJob> submit(const std::string& dir, const std::string& script);
    // The job's state: squeue while Slurm holds it; once it left the queue (or squeue shows it finished),
    // `scontrol show job`, then sacct. When none of them knows the job any more the state is UNKNOWN (never
    // FAILED): accounting may simply be off. Connection problems are errors, not states.
    Result<JobInfo> job(const std::string& job_id);
    // The states of several jobs at once, in the order given: one squeue for all of them (a watcher of many
    // runs asks Slurm once per poll, as submitit's does); a job squeue no longer shows in the queue goes on
    // to scontrol and sacct as in job(). Any bad id refuses the whole call before a command runs.
    Result<std::vector<JobInfo>> jobs(const std::vector<std::string>& job_ids);
    Status cancel(const std::string& job_id);
    // One row per node and partition (sinfo -N), with GPUs from GRES.
    Result<std::vector<NodeRow>> nodes();
    // The same for the nodes of a Slurm host list ("node[1-2],gpu7", as squeue prints a job's nodes):
    // sinfo -n. A host list with other characters is refused before it reaches a command line.
    Result<std::vector<NodeRow>> nodes(const std::string& host_list);

private:
    // A job's answer from squeue's rows: its live row; else scontrol, then sacct, then the finished row
    // squeue still listed, else UNKNOWN.
    Result<JobInfo> job_from_queue(const std::string& job_id, const std::vector<QueueRow>& rows);
    // Runs argv (quoted word by word) in `dir` when given; a non-zero exit is returned as a result, not an
    // error, so callers can tell "Slurm said no" from "the connection failed".
    Result<ExecResult> run(const std::vector<std::string>& argv, const std::string& dir = "");
    Status failure(const std::vector<std::string>& argv, const ExecResult& result) const;

    Session& session_;
    std::chrono::milliseconds timeout_;
};

// Job ids as sbatch prints them: digits, optionally "_N" (array task). Anything else is refused before it
// reaches a command line.
Status check_job_id(const std::string& job_id);
// Host lists as Slurm prints them: names of letters, digits, '.', '_' and '-', with ',' and ranges in
// brackets ("node[1-3,7]").
Status check_host_list(const std::string& host_list);

}  // namespace slipway::remote
