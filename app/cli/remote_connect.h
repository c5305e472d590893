// What the cluster subcommands share: opening a Session to a profile's login node (host keys asked on the
// terminal with their fingerprint, or refused with --batch), the profile store, run config loading, where
// local files are (resources, the engine next to slipway), tables, and the subcommand entry points.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/remote_cli.h"
#include "contract/run_config.h"
#include "contract/status.h"
#include "remote/deploy/doctor_run.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/ssh/session.h"

namespace slipway::app {

// The ConnectOptions of a profile with the command line's overrides (known_hosts, ssh config).
remote::ConnectOptions connect_options(const remote::ClusterProfile& profile, const SshCliOptions& ssh);
// Connects; prompts on the terminal (/dev/tty) unless --batch.
Result<std::unique_ptr<remote::Session>> connect_cluster(const remote::ClusterProfile& profile,
                                                         const SshCliOptions& ssh);

remote::ProfileStore profile_store(const RemoteCommands& commands);

// The folder holding resources/ (the source tree when run from build/bin, <prefix>/share/slipway when
// installed); empty when none is found.
std::string resource_root();
// slipway-engine next to this executable, or empty.
std::string engine_next_to_slipway();

// A run config (or a finished run's run.json) from `path`; every problem is in the error.
Result<RunConfig> load_run_file(const std::string& path);

// "slipway: <message>" on err; returns `code` (the subcommand's exit code).
inline int fail(std::ostream& err, const std::string& message, int code = 1) {
    err << "slipway: " << message << "\n";
    return code;
}

// Rows printed as left-aligned columns two spaces apart (the first row is the header).
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows);

// The subcommands, one function each (clusters_command.cpp, render_command.cpp, remote_run_commands.cpp,
// doctor_command.cpp).
int run_clusters_list(RemoteCommands& c, std::ostream& out, std::ostream& err);
// pipeline_command.cpp: `slipway pipeline validate | render | run`, and `slipway submit` of a pipeline file.
int run_pipeline_validate(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_pipeline_render(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_pipeline_local(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_pipeline_submit(RemoteCommands& c, std::ostream& out, std::ostream& err);
bool is_pipeline_file(const std::string& path);
int run_clusters_add(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_clusters_test(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_clusters_remove(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_render_sbatch(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_render_dockerfile(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_image_build(RemoteCommands& c, std::ostream& out, std::ostream& err);  // image_command.cpp
int run_submit(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_status(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_cancel(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_follow(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_fetch(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_doctor(RemoteCommands& c, std::ostream& out, std::ostream& err);  // doctor_command.cpp
// What `slipway doctor` does once connected, which the Clusters page's Run doctor runs too: the job from the
// options (nodes and GPUs from sinfo where they leave them open), remote::run_doctor, and the report saved
// unless no_save. Each progress line is what the CLI prints after "doctor: ". stop_requested: see DoctorRun.
Result<remote::DoctorOutcome> doctor_on_session(remote::Session& session,
                                                const remote::ClusterProfile& profile,
                                                const DoctorCliOptions& options,
                                                const std::function<void(const std::string&)>& progress,
                                                std::function<bool()> stop_requested = {});
// submit --exclude-bad: the slow and failed nodes of the cluster's last doctor report added to the run's
// --exclude (merged with one it has); notes what it did on `err`.
Status exclude_bad_nodes(const std::string& cluster, RunConfig& config, std::ostream& err);

}  // namespace slipway::app
