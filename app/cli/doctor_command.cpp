// `slipway doctor CLUSTER`: the cluster health check (remote/deploy/doctor_run.h) from the terminal, its
// node table (or --json), and the saved report that `slipway submit --exclude-bad` reads (the doctor itself,
// which the Clusters page runs too, is clusters/cluster_doctor.h). Exit codes: 0 every node and the crossing
// ok, 3 some node slow or failed (named on the "exclude:" line) or the crossing slow or failed, 1 the doctor
// could not run.
#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/remote_connect.h"
#include "remote/deploy/doctor_run.h"
#include "remote/slurm/slurm_client.h"

namespace slipway::app {

int run_doctor(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    const DoctorOptions& d = c.doctor_options;
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
