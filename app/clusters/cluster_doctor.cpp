// The doctor as both doors run it (see cluster_doctor.h).
#include "clusters/cluster_doctor.h"

#include <algorithm>

#include "core/install_paths.h"
#include "remote/slurm/slurm_client.h"

namespace slipway::app {
namespace {

bool node_is_usable(const remote::NodeRow& row) {
    const std::string& s = row.state;
    return s.find("down") == std::string::npos && s.find("drain") == std::string::npos &&
           s.find("fail") == std::string::npos && s.find('*') == std::string::npos;
}

}  // namespace

Result<remote::DoctorOutcome> doctor_on_session(remote::Session& session,
                                                const remote::ClusterProfile& profile, const DoctorOptions& d,
                                                const std::function<void(const std::string&)>& progress,
                                                std::function<bool()> stop_requested) {
    remote::SlurmClient slurm(session);
    remote::DoctorRun run;
    remote::DoctorJobRequest& job = run.job;
    job.partition = d.partition.empty() ? profile.default_partition : d.partition;
    job.nodelist = d.nodelist;
    job.exclude = d.exclude;
    job.cpu_ranks_per_node = d.cpu_ranks;
    job.exclusive = !d.shared;
    job.sizes = d.sizes;
    job.iters = d.iters;
    job.step_timeout_s = d.step_timeout_s;
    job.job_minutes = d.job_minutes;
    job.environment.image = d.image;
    run.engine_bundle = find_engine_bundle();
    run.engine_binary = d.engine.empty() ? engine_next_to_slipway() : d.engine;
    run.remote_engine = d.remote_engine;
    run.deadline = std::chrono::seconds(d.deadline_s);
    run.judgement.fabric = d.fabric;
    if (d.expect_busbw_gbps > 0) run.judgement.expect_busbw_gbps = d.expect_busbw_gbps;
    run.judgement.slow_fraction = d.slow_fraction;
    run.on_progress = progress;
    run.stop_requested = std::move(stop_requested);

    // Node count and GPUs from sinfo when not given: every usable node of the partition, and the GPUs the
    // smallest of them has.
    if (d.nodes == 0 || d.gpus_per_node < 0) {
        Result<std::vector<remote::NodeRow>> rows = slurm.nodes();
        if (!rows.ok()) return rows.status();
        int usable = 0;
        long long min_gpus = -1;
        for (const remote::NodeRow& row : *rows) {
            const bool in_partition =
                job.partition.empty() ? row.default_partition : row.partition == job.partition;
            const bool listed = d.nodelist.empty() ||
                                std::find(d.nodelist.begin(), d.nodelist.end(), row.node) != d.nodelist.end();
            const bool excluded = std::find(d.exclude.begin(), d.exclude.end(), row.node) != d.exclude.end();
            if (!in_partition || !listed || excluded || !node_is_usable(row)) continue;
            ++usable;
            min_gpus = min_gpus < 0 ? row.gpus : std::min<long long>(min_gpus, row.gpus);
        }
        if (usable == 0)
            return Status::Error("no usable node in partition \"" +
                                 (job.partition.empty() ? "(default)" : job.partition) +
                                 "\" (sinfo shows them down, drained or absent)");
        job.nodes = d.nodes > 0 ? d.nodes : usable;
        job.gpus_per_node =
            d.gpus_per_node >= 0 ? d.gpus_per_node : static_cast<int>(std::max(0LL, min_gpus));
    } else {
        job.nodes = d.nodes;
        job.gpus_per_node = d.gpus_per_node;
    }
    progress((job.nodelist.empty() ? std::to_string(job.nodes) : std::to_string(job.nodelist.size())) +
             " node(s), " +
             (job.gpus_per_node > 0 ? std::to_string(job.gpus_per_node) + " GPU(s) each, NCCL"
                                    : std::to_string(job.cpu_ranks_per_node) + " CPU ranks each, Gloo"));

    Result<remote::DoctorOutcome> outcome = remote::run_doctor(session, slurm, profile, run);
    if (!outcome.ok() || d.no_save) return outcome;
    const remote::DoctorReportStore store;
    if (Status s = store.save(outcome->report); !s.ok()) return s;
    progress("report saved to " + store.path_for(outcome->report.cluster));
    return outcome;
}

}  // namespace slipway::app
