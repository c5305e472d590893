// Who this process is in a distributed run: rank, world size, local rank, node, and the rendezvous
// master, from torchrun's variables or Slurm's (no torch). Precedence: torchrun (RANK and WORLD_SIZE
// set) over Slurm (SLURM_PROCID set) over a single local process. Inconsistent values are an error that
// shows them. The port: MASTER_PORT when set; otherwise, with SLIPWAY_RDZV_FILE set, 0: rank 0 binds a free
// port and publishes it there (rendezvous.h); otherwise torchrun's 29500. Under Slurm a multi-rank step needs
// MASTER_PORT or SLIPWAY_RDZV_FILE (a port derived from the job id could collide with another job's).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "contract/status.h"

namespace slipway::dist {

struct DistEnv {
    int64_t rank = 0;
    int64_t world_size = 1;
    int64_t local_rank = 0;
    int64_t local_world_size = 1;
    int64_t node_rank = 0;
    std::string master_addr = "127.0.0.1";
    int master_port = 29500;
    std::string source = "single";  // torchrun | slurm | single
    std::string secret;             // SLIPWAY_RDZV_SECRET: every multi-rank run needs it (rendezvous.h)
    std::string port_file;          // SLIPWAY_RDZV_FILE: where rank 0 publishes master_port 0's real port
    std::string scope;              // "JOB.STEP" under Slurm: a port file from another step is ignored
};

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment as an EnvLookup.
EnvLookup process_env();

Result<DistEnv> resolve_dist_env(const EnvLookup& env);

// Slurm's compressed host lists, as `scontrol show hostnames` expands them: "gpu[01-03,07],cpu5" ->
// gpu01 gpu02 gpu03 gpu07 cpu5; several bracket groups in one name expand as a product.
Result<std::vector<std::string>> expand_nodelist(const std::string& nodelist);

// Slurm's SLURM_TASKS_PER_NODE form "2(x3),1" -> {2, 2, 2, 1}.
Result<std::vector<int64_t>> expand_tasks_per_node(const std::string& text);

}  // namespace slipway::dist
