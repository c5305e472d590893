// The rendezvous lines of a Slurm batch script, one text for every script that starts ranks (training runs,
// the doctor): the first host of the allocation is the master, rank 0 binds a free port there and publishes
// it in a file in a folder every node reads, and a fresh per-job secret (srun passes it to every task in the
// environment; never a file, never run.json) guards the store. No port is derived from the job id, so two
// jobs on one master never collide and a port someone else holds is never chosen.
#pragma once

#include <string>

namespace slipway::remote {

// Bash lines that set MASTER_ADDR, SLIPWAY_RDZV_SECRET and SLIPWAY_RDZV_FILE (in the folder named by the
// shell variable `folder_variable`, e.g. "run_dir") and unset MASTER_PORT.
std::string rendezvous_lines(const std::string& folder_variable);

}  // namespace slipway::remote
