// `slipway doctor CLUSTER`: the cluster health check (remote/deploy/doctor_run.h) from the terminal, its
// node table (or --json), and the saved report that `slipway submit --exclude-bad` reads; doctor_on_session
// is the part the Clusters page runs too. Exit codes: 0 every node and the crossing ok, 3 some node slow or
// failed (named on the "exclude:" line) or the crossing slow or failed, 1 the doctor could not run.
#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/remote_connect.h"
#include "remote/deploy/doctor_run.h"
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
                                                const remote::ClusterProfile& profile,
                                                const DoctorCliOptions& d,
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
    job.container_image = d.image;
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

int run_doctor(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    const DoctorCliOptions& d = c.doctor_options;
    Result<remote::ClusterProfile> profile = profile_store(c).find(c.cluster_name);
    if (!profile.ok()) return fail(err, profile.error());
    Result<std::unique_ptr<remote::Session>> session = connect_cluster(*profile, c.ssh);
    if (!session.ok()) return fail(err, session.error());
    Result<remote::DoctorOutcome> outcome = doctor_on_session(
        **session, *profile, d, [&](const std::string& text) { err << "doctor: " << text << std::endl; });
    if (!outcome.ok()) return fail(err, outcome.error());
    const remote::DoctorReport& report = outcome->report;
    if (d.json)
        out << remote::report_to_json(report).dump(2) << "\n";
    else
        out << remote::format_report(report);
    if (report.nodes.empty()) return 1;
    return report.healthy() ? 0 : 3;
}

// The nodes of the cluster's last doctor report that were slow or failed, as one more --exclude.
Status exclude_bad_nodes(const std::string& cluster, RunConfig& config, std::ostream& err) {
    Result<remote::DoctorReport> report = remote::DoctorReportStore().load(cluster);
    if (!report.ok()) return report.status();
    std::vector<std::string> bad = report->bad_nodes();
    err << "slipway: doctor report of " << report->created << " (job " << report->job_id << "): ";
    if (bad.empty()) {
        err << "every node ok, nothing to exclude\n";
        return Status::Ok();
    }
    std::string list;
    for (const std::string& node : bad) {
        if (Status s = remote::check_node_name(node); !s.ok()) return s;
        list += (list.empty() ? "" : ",") + node;
    }
    // One --exclude: merged with the run's own, if it has one.
    std::vector<std::string>& extra = config.slurm.extra;
    auto own = std::find_if(extra.begin(), extra.end(),
                            [](const std::string& e) { return e.rfind("--exclude=", 0) == 0; });
    if (own != extra.end())
        *own += "," + list;
    else
        extra.push_back("--exclude=" + list);
    err << "excluding " << list << "\n";
    return Status::Ok();
}

}  // namespace slipway::app
