// The cluster health check as both doors run it: `slipway doctor` and the Clusters page's Run doctor. Its
// options, and what it does once connected: the job from the options (nodes and GPUs from sinfo where
// they leave them open), remote::run_doctor, and the report saved for `submit --exclude-bad`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "contract/status.h"
#include "remote/deploy/doctor_run.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/ssh/session.h"

namespace slipway::app {

// The doctor's options (`slipway doctor`'s flags; the health view's fields).
struct DoctorOptions {
    std::string partition;              // empty: the profile's default partition
    int nodes = 0;                      // 0: every usable node of the partition
    std::vector<std::string> nodelist;  // exactly these nodes
    std::vector<std::string> exclude;
    int gpus_per_node = -1;  // -1: from sinfo (the smallest node's GPUs)
    int cpu_ranks = 2;       // Gloo ranks per CPU node
    std::string fabric = "auto";
    double expect_busbw_gbps = 0;  // 0: from the fabric table
    double slow_fraction = 0.5;
    std::string sizes = "1M,16M";
    int iters = 10;
    int step_timeout_s = 120;
    int job_minutes = 10;
    int deadline_s = 0;         // 0: job minutes + 5 minutes
    std::string image;          // pyxis clusters: the image with slipway-engine
    std::string engine;         // local engine to deploy (default: next to slipway)
    std::string remote_engine;  // an engine already on the cluster
    bool shared = false;        // do not ask for whole nodes
    bool json = false;
    bool no_save = false;
};

// Runs the doctor over a connected session; the report is saved unless no_save. Each progress line is what
// the CLI prints after "doctor: ". stop_requested: see DoctorRun.
Result<remote::DoctorOutcome> doctor_on_session(remote::Session& session,
                                                const remote::ClusterProfile& profile,
                                                const DoctorOptions& options,
                                                const std::function<void(const std::string&)>& progress,
                                                std::function<bool()> stop_requested = {});

}  // namespace slipway::app
