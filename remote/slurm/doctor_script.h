// The doctor job: an sbatch script over the chosen partition and nodes, and the per-node check script it
// starts with srun. On each node: nvidia-smi (GPUs, driver, ECC, clocks) and `slipway-engine bench-comm`
// within the node; then one step across all nodes that first checks each node reaches the master's
// rendezvous port and then runs bench-comm over every rank. Every step and command has a time limit, and
// every result is a `SLIPWAY-DOCTOR <node> <check> <payload>` line that doctor_report.h parses.
#pragma once

#include <string>
#include <vector>

#include "contract/status.h"
#include "remote/slurm/job_environment.h"

namespace slipway::remote {

struct DoctorJobRequest {
    std::string doctor_dir;  // absolute remote folder holding both scripts; the job runs there
    std::string engine;      // slipway-engine on the nodes: an absolute path, or a name on the image's PATH
    // Where the checks run: the profile's setup lines, then its runtime with the image (none: bare srun).
    JobEnvironment environment;
    std::string engine_dir;             // an engine built on the cluster: its folder, mounted; empty: none
    std::string partition;              // empty: Slurm's default
    std::string account, qos;           // empty: none
    int nodes = 1;                      // --nodes (the size of nodelist when that is given)
    std::vector<std::string> nodelist;  // --nodelist: exactly these nodes
    std::vector<std::string> exclude;   // --exclude
    int gpus_per_node = 0;              // --gres=gpu:N and N NCCL ranks per node; 0: CPU nodes, Gloo
    int cpu_ranks_per_node = 2;         // Gloo ranks per node when gpus_per_node is 0
    bool exclusive = true;              // whole nodes: nothing else skews the bandwidth
    std::string sizes = "1M,16M";       // bench-comm --sizes
    int iters = 10;                     // bench-comm --iters
    int step_timeout_s = 120;           // each check, each bench-comm and each srun step
    int job_minutes = 10;               // the job's own --time
};

// The job script (bash; `bash -n` and shellcheck clean). Values that reach the shell are quoted with
// shell_quote(); #SBATCH values are checked Slurm words and numbers. Refuses anything else, naming it.
[[nodiscard]] Result<std::string> render_doctor_sbatch(const DoctorJobRequest& request);

// The per-node check script (constant text: it reads its parameters from the job's environment).
const std::string& doctor_node_script();

// File names inside doctor_dir.
inline constexpr const char* kDoctorSbatchName = "doctor.sbatch";
inline constexpr const char* kDoctorNodeScriptName = "node_check.sh";

}  // namespace slipway::remote
