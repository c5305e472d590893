// What the cluster subcommands share: opening a Session to a profile's login node (host keys asked on the
// terminal with their fingerprint, or refused with --batch), the profile store, run config loading, tables,
// and the subcommand entry points. Where local files are is core/install_paths.h, included for them.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/remote_cli.h"
#include "clusters/cluster_connect.h"
#include "contract/mllog.h"
#include "contract/run_config.h"
#include "contract/status.h"
#include "core/install_paths.h"
#include "remote/deploy/doctor_run.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/ssh/session.h"

namespace slipway::app {

// Connects; prompts on the terminal (/dev/tty) unless --batch.
Result<std::unique_ptr<remote::Session>> connect_cluster(const remote::ClusterProfile& profile,
                                                         const SshOptions& ssh);

remote::ProfileStore profile_store(const RemoteCommands& commands);

// A run config (or a finished run's run.json) from `path`; every problem is in the error.
Result<RunConfig> load_run_file(const std::string& path);

// "slipway: <message>" on err; returns `code` (the subcommand's exit code).
inline int fail(std::ostream& err, const std::string& message, int code = 1) {
    err << "slipway: " << message << "\n";
    return code;
}

// Where a run config's relative input paths point: `given` (--inputs), else the current folder when it holds
// them, else the resource root (presets name resources/demo/...).
std::string input_root_for(const RunConfig& config, const std::string& given);

// "train_loss 2.5 step 10 samples 80" for a train_loss or eval_accuracy event (nothing for other keys): the
// progress line `slipway follow` and `slipway run` print.
void print_metric_event(const MllogEvent& event, std::ostream& out);

// Rows printed as left-aligned columns two spaces apart (the first row is the header).
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows);

// The subcommands, one function each (clusters_command.cpp, render_command.cpp, remote_run_commands.cpp,
// doctor_command.cpp).
int run_clusters_list(RemoteCommands& c, std::ostream& out, std::ostream& err);
// pipeline_command.cpp: `slipway pipeline validate | render | run`, and `slipway submit` of a pipeline file.
int run_pipeline_validate(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_pipeline_render(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_pipeline_local(RemoteCommands& c, std::ostream& out, std::ostream& err);
// local_run_command.cpp: `slipway run`, a run on This computer.
int run_local(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_pipeline_submit(RemoteCommands& c, std::ostream& out, std::ostream& err);
bool is_pipeline_file(const std::string& path);
int run_clusters_add(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_clusters_test(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_clusters_remove(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_render_sbatch(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_render_dockerfile(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_image_build(RemoteCommands& c, std::ostream& out, std::ostream& err);  // image_command.cpp
// engine_command.cpp: `slipway engine bundle | build | list`.
int run_engine_bundle(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_engine_build(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_engine_list(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_submit(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_status(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_cancel(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_follow(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_fetch(RemoteCommands& c, std::ostream& out, std::ostream& err);
int run_doctor(RemoteCommands& c, std::ostream& out, std::ostream& err);  // doctor_command.cpp
// submit --exclude-bad: the slow and failed nodes of the cluster's last doctor report added to the run's
// --exclude (merged with one it has); notes what it did on `err`.
Status exclude_bad_nodes(const std::string& cluster, RunConfig& config, std::ostream& err);

}  // namespace slipway::app
