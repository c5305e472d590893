// A local torchrun: starts N ranks of a command on this machine with the rendezvous variables set
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, OMP_NUM_THREADS, a fresh
// SLIPWAY_RDZV_SECRET, and MASTER_PORT when one is given, else SLIPWAY_RDZV_FILE in a private folder where
// rank 0 publishes the free port it bound), prefixes every output line with the rank ("1: ", as `srun
// --label`), and when one rank fails gives the others a grace period to notice and exit, then stops them
// (SIGTERM, then SIGKILL). SIGTERM / SIGINT to the launcher are passed on to every rank. No torch.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "contract/status.h"

namespace slipway::dist {

struct LaunchOptions {
    int nproc = 1;
    int threads_per_rank = 0;  // OMP_NUM_THREADS for each rank; 0 = this machine's cores / nproc (>= 1)
    std::string master_addr = "127.0.0.1";
    int master_port = 0;          // 0 = rank 0 binds a free one and publishes it
    double grace_s = 15;          // after a rank fails: how long the others get to exit on their own
    double stop_timeout_s = 300;  // after a signal to the launcher: how long the ranks get to checkpoint
    bool label = true;            // prefix lines with "RANK: "
    // argv of each rank: a program path (contains '/') or, without one, a subcommand of `self_exe`.
    std::vector<std::string> command;
    std::string self_exe;
};

struct LaunchResult {
    int exit_code = 0;     // the first failing rank's code (128 + signal when killed), else 0
    int failed_rank = -1;  // -1: every rank succeeded
    std::string summary;   // one line for the user
};

// Errors: nothing to run, nproc < 1, no random secret or private folder, fork/exec failure.
Result<LaunchResult> launch(const LaunchOptions& options, std::ostream& out, std::ostream& err);

// A TCP port on `addr` that was free a moment ago (bound to port 0 and released).
Result<int> pick_free_port(const std::string& addr);

}  // namespace slipway::dist
