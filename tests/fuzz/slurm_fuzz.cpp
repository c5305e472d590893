// Fuzz harness: what Slurm's commands print on a cluster (sbatch --parsable, squeue, scontrol show job,
// sacct, sinfo with GRES), each parser fed the same bytes.
#include <string>

#include "fuzz_common.h"
#include "remote/slurm/slurm_parsers.h"

using namespace slipway;
using namespace slipway::remote;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string out(fuzz::as_text(data, size));
    (void)parse_sbatch_parsable(out);
    if (auto rows = parse_squeue(out); rows.ok()) {
        for (const QueueRow& row : *rows)
            (void)is_terminal_state(normalize_job_state(row.state));
    }
    for (const ScontrolRecord& record : parse_scontrol_records(out)) {
        // A value never holds another field: spaces inside a value must not make keys up.
        for (const auto& [key, value] : record)
            FUZZ_CHECK(!key.empty() && key.find_first_of(" \t\n=") == std::string::npos, key);
    }
    (void)job_info_from_scontrol(out);
    (void)job_info_from_sacct(out, "42");
    if (Result<std::vector<Gres>> gres = parse_gres(out); gres.ok()) {
        for (const Gres& g : *gres)
            FUZZ_CHECK(g.count >= 0 && g.count <= kMaxSlurmCount, out);
        FUZZ_CHECK(gpu_count(*gres) >= 0, out);
    }
    if (auto nodes = parse_sinfo_nodes(out); nodes.ok()) {
        for (const PartitionInfo& p : summarize_partitions(*nodes))
            FUZZ_CHECK(p.nodes >= 0 && p.cpus >= 0 && p.gpus >= 0, p.name);
    }
    return 0;
}
