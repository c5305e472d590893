// Who this process is in a distributed run: rank, world size, local rank, node, and the rendezvous
// master, from torchrun's variables or Slurm's (no torch). Precedence: torchrun (RANK and WORLD_SIZE
// set) over Slurm (SLURM_PROCID set) over a single local process. Inconsistent values are an error that
// shows them.
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
