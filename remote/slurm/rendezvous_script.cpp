// rendezvous_lines (rendezvous_script.h).
#include "remote/slurm/rendezvous_script.h"

namespace slipway::remote {

std::string rendezvous_lines(const std::string& folder_variable) {
    return "mapfile -t hosts < <(scontrol show hostnames \"$SLURM_JOB_NODELIST\")\n"
           "export MASTER_ADDR=\"${hosts[0]}\"\n"
           "unset MASTER_PORT\n"
           "SLIPWAY_RDZV_SECRET=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')\n"
           "export SLIPWAY_RDZV_SECRET\n"
           "export SLIPWAY_RDZV_FILE=\"$" +
           folder_variable + "/.slipway-rendezvous-$SLURM_JOB_ID\"\n";
}

}  // namespace slipway::remote
