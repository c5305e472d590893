// The headless cluster subcommands of `slipway`: clusters (list/add/test/remove), render (sbatch,
// dockerfile), image build, submit, status, cancel, follow, fetch and doctor. Registration fills
// RemoteCommands; running one returns its exit code. Everything remote goes through remote/ (Session, Slurm,
// deploy, runlog); the run commands record runs in the run history the app shares (Qt Core + Sql only, on
// the QCoreApplication main.cpp makes).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "clusters/cluster_connect.h"
#include "clusters/cluster_doctor.h"

namespace CLI {
class App;
}

namespace slipway::app {

struct RemoteCommands {
    SshOptions ssh;
    std::string clusters_file;  // --clusters-file, else $XDG_CONFIG_HOME/slipway/clusters.json

    // clusters
    CLI::App* clusters_list = nullptr;
    CLI::App* clusters_add = nullptr;
    CLI::App* clusters_test = nullptr;
    CLI::App* clusters_remove = nullptr;
    std::string cluster_name;
    std::string host, user, identity, proxy_jump, workdir = "~/slipway", container = "none";
    std::string partition, account, qos;
    std::string engine_source = "build";  // --engine-source
    std::vector<std::string> env_setup;   // --env-setup (repeated)
    int port = 0;

    // render
    CLI::App* render_sbatch = nullptr;
    CLI::App* render_dockerfile = nullptr;
    std::string run_file;
    std::string cluster;  // --cluster (render, submit)

    // submit
    CLI::App* submit = nullptr;
    std::string run_name;                // --name: overrides the config's name
    std::string engine;                  // --engine: the slipway-engine to deploy to bare-metal clusters
    std::string inputs;                  // --inputs: where relative input paths point
    std::vector<std::string> overrides;  // after --: training-script flags (--max_steps 40)
    bool exclude_bad = false;            // --exclude-bad: leave out the last doctor report's bad nodes

    // image build
    CLI::App* image_build = nullptr;
    // engine bundle: the engine's sources this app carries, for a cluster to build
    CLI::App* engine_bundle = nullptr;
    CLI::App* engine_build = nullptr;  // engine build --cluster NAME RUN.json (run_file, cluster, bundle)
    CLI::App* engine_list = nullptr;   // engine list --cluster NAME
    std::string bundle_out;            // --out
    std::string bundle;                // --bundle: another engine bundle than the one this app carries
    bool build_log = false;            // --log: the build job's log, streamed to stderr
    std::string image_tag;             // --tag
    std::string sqsh;                  // --sqsh: also enroot import to this remote path
    std::string context;  // --context: build context tarball (default: git archive of the source tree)

    // doctor
    CLI::App* doctor = nullptr;
    DoctorOptions doctor_options;

    // pipeline validate / render / run (the file is run_file; render takes --cluster; run: --engine,
    // --inputs and --runs-dir)
    CLI::App* pipeline_validate = nullptr;
    CLI::App* pipeline_render = nullptr;
    CLI::App* pipeline_run = nullptr;
    std::string
        runs_dir;  // pipeline run, run: where its folder goes (default ~/.local/share/slipway/local-runs)

    // run: a run on This computer (run_file, run_name, engine, inputs, runs_dir, overrides, raw)
    CLI::App* run_local = nullptr;

    // status / cancel / follow / fetch
    CLI::App* status = nullptr;
    CLI::App* cancel = nullptr;
    CLI::App* follow = nullptr;
    CLI::App* fetch = nullptr;
    std::string run_id;
    double interval_s = 2.0;
    int outage_limit_s = 300;  // follow: how long a lost connection is retried
    bool raw = false;
    std::string fetch_to;
    bool checkpoints = false;
};

void add_remote_commands(CLI::App& cli, RemoteCommands& commands);
// The exit code of the subcommand that was given, or nullopt when none of these was.
std::optional<int> run_remote_commands(RemoteCommands& commands, std::ostream& out, std::ostream& err);

}  // namespace slipway::app
