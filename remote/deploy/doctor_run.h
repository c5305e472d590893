// Running `slipway doctor` on a cluster: the doctor folder (<remote_workdir>/doctor/<id>/ with the job
// script, the node check script and, for a profile that uploads this computer's engine, the engine), the
// checks in the profile's environment (its setup lines, its runtime and image) with the engine the profile
// names (the image's, or one built on the cluster), the submission, waiting for the
// job within a deadline (a job still running then is cancelled: a hung node never hangs the doctor), and
// the report judged from the job's output and saved as the cluster's last report.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "contract/status.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/slurm/doctor_report.h"
#include "remote/slurm/doctor_script.h"
#include "remote/slurm/slurm_client.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

struct DoctorRun {
    DoctorJobRequest job;       // doctor_dir and engine are filled in by run_doctor
    std::string engine_binary;  // local slipway-engine uploaded for a bare-metal (container none) profile
    std::string remote_engine;  // or: an engine already on the cluster (absolute path); wins when set
    // A profile that builds its engine on the cluster: the bundle to build (or find) it from, in the
    // checks' environment, as a run in that environment would (engine_build.h).
    std::string engine_bundle;
    DoctorJudgement judgement;  // expected_nodes is filled from the job when empty
    std::chrono::milliseconds poll_interval{2000};
    // How long to wait for the job, queueing included; 0: its --time plus five minutes. Then it is cancelled
    // and judged on what it printed.
    std::chrono::seconds deadline{0};
    std::function<void(const std::string&)> on_progress;  // "submitted job 12", "state RUNNING", ...
    // How to wait between polls (tests pass one that only counts); waiting time is the sum of the sleeps.
    std::function<void(std::chrono::milliseconds)> sleep;
    // Polled before submitting and between job polls (the app's Cancel): once it says true the job is
    // cancelled as at the deadline, and run_doctor fails saying so (no report: a user's stop judges nothing).
    std::function<bool()> stop_requested;
};

struct DoctorOutcome {
    DoctorReport report;
    std::string doctor_dir;
    std::string final_state;
    std::string output;  // the job's whole output file
};

// Deploys, submits, waits and judges; the report's cluster, job id, time and partition are filled in. The
// caller saves it (DoctorReportStore).
[[nodiscard]] Result<DoctorOutcome> run_doctor(Session& session, SlurmClient& slurm,
                                               const ClusterProfile& profile, DoctorRun run);

}  // namespace slipway::remote
