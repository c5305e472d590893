// Registration of the cluster subcommands (the option table with help text) and dispatch to the one that
// was given (see remote_cli.h).
#include "cli/remote_cli.h"

#include <CLI/CLI.hpp>

#include "cli/remote_connect.h"

namespace slipway::app {
namespace {

constexpr const char* kSshHelp =
    "Connection: hosts, users, ports, keys and jump hosts come from the cluster profile and the ssh config. "
    "Unknown host keys are shown with their SHA256 fingerprint and asked about on the terminal; --batch "
    "refuses them (and any passphrase prompt). --known-hosts / $SLIPWAY_KNOWN_HOSTS and --ssh-config / "
    "$SLIPWAY_SSH_CONFIG replace ~/.ssh/known_hosts and ~/.ssh/config.";

void add_ssh_options(CLI::App* command, SshOptions& ssh) {
    command->add_flag("--batch", ssh.batch, "Never ask: refuse unknown host keys and passphrase prompts");
    command->add_option("--known-hosts", ssh.known_hosts, "known_hosts file (default ~/.ssh/known_hosts)");
    command->add_option("--ssh-config", ssh.ssh_config,
                        "ssh config file (default ~/.ssh/config; none: no file)");
    command->add_option("--connect-timeout", ssh.connect_timeout_s, "Seconds to wait for the login node")
        ->capture_default_str();
    command->footer(kSshHelp);
}

}  // namespace

void add_remote_commands(CLI::App& cli, RemoteCommands& c) {
    CLI::App* clusters =
        cli.add_subcommand("clusters", "Cluster profiles (kept in $XDG_CONFIG_HOME/slipway)");
    clusters->require_subcommand(1);
    clusters->add_option("--clusters-file", c.clusters_file,
                         "Profiles file (default clusters.json in the config folder)");
    c.clusters_list = clusters->add_subcommand("list", "List the cluster profiles");
    c.clusters_add =
        clusters->add_subcommand("add", "Add or replace a cluster profile (no secrets are stored)");
    c.clusters_add->add_option("NAME", c.cluster_name, "Profile name")->required();
    c.clusters_add->add_option("--host", c.host, "Login node: host name, address or ssh config alias")
        ->required();
    c.clusters_add->add_option("--port", c.port, "SSH port (default: ssh config, else 22)");
    c.clusters_add->add_option("--user", c.user, "Login user (default: ssh config, else the local user)");
    c.clusters_add->add_option("--identity", c.identity,
                               "Private key file (its passphrase is asked, never stored)");
    c.clusters_add->add_option("--proxy-jump", c.proxy_jump, "Jump host [user@]host[:port]");
    c.clusters_add->add_option("--workdir", c.workdir, "Remote folder for runs (runs go to WORKDIR/runs/ID)")
        ->capture_default_str();
    c.clusters_add
        ->add_option("--container", c.container,
                     "Where steps run: none (the node, after --env-setup), pyxis (srun --container-image), "
                     "apptainer or singularity (exec IMAGE)")
        ->check(CLI::IsMember({"none", "pyxis", "apptainer", "singularity"}))
        ->capture_default_str();
    c.clusters_add
        ->add_option("--engine-source", c.engine_source,
                     "Which slipway-engine the nodes run: build (built on the cluster from this app's "
                     "bundle, in the run's environment), image (the image's or environment's PATH), "
                     "desktop (this computer's, uploaded: only for nodes like this one)")
        ->check(CLI::IsMember({"build", "image", "desktop"}))
        ->capture_default_str();
    c.clusters_add->add_option(
        "--env-setup", c.env_setup,
        "A shell line every job runs first (module load ..., source venv/bin/activate); "
        "repeat for several");
    c.clusters_add->add_option("--partition", c.partition, "Default partition when a run names none");
    c.clusters_add->add_option("--account", c.account, "Default account");
    c.clusters_add->add_option("--qos", c.qos, "Default QOS");
    c.clusters_test = clusters->add_subcommand("test", "Connect and show the partitions, nodes and GPUs");
    c.clusters_test->add_option("NAME", c.cluster_name, "Profile name")->required();
    add_ssh_options(c.clusters_test, c.ssh);
    c.clusters_remove = clusters->add_subcommand("remove", "Remove a cluster profile");
    c.clusters_remove->add_option("NAME", c.cluster_name, "Profile name")->required();

    CLI::App* render = cli.add_subcommand("render", "Print the sbatch script or Dockerfile a run would use");
    render->require_subcommand(1);
    c.render_sbatch = render->add_subcommand("sbatch", "The sbatch script (bash; passes shellcheck)");
    c.render_dockerfile = render->add_subcommand("dockerfile", "The training image's Dockerfile (NGC base)");
    for (CLI::App* r : {c.render_sbatch, c.render_dockerfile}) {
        r->add_option("RUN", c.run_file, "Run config JSON (or a finished run's run.json)")->required();
        r->add_option("--cluster", c.cluster, "Use this profile's defaults (partition, pyxis or bare srun)");
    }

    CLI::App* image = cli.add_subcommand("image", "The run's training image");
    image->require_subcommand(1);
    c.image_build = image->add_subcommand(
        "build",
        "Render the Dockerfile, docker build it on the cluster profile's host (output streamed here), "
        "optionally enroot import it to a .sqsh");
    c.image_build->add_option("RUN", c.run_file, "Run config JSON (its container section)")->required();
    c.image_build
        ->add_option("--cluster", c.cluster, "Profile of a host that has docker (and enroot for --sqsh)")
        ->required();
    c.image_build->add_option("--tag", c.image_tag, "Image name:tag to build")->required();
    c.image_build->add_option("--sqsh", c.sqsh, "Also import the image to this .sqsh path on that host");
    c.image_build->add_option("--context", c.context,
                              "Build context tarball (default: git archive of the Slipway source tree)");
    add_ssh_options(c.image_build, c.ssh);

    CLI::App* engine = cli.add_subcommand("engine", "The training engine's sources, for a cluster to build");
    engine->require_subcommand(1);
    c.engine_bundle = engine->add_subcommand(
        "bundle",
        "Write the engine bundle this app carries: the sources of its slipway-engine with every dependency "
        "but "
        "torch, CUDA, NCCL, a compiler and CMake; `bash build.sh` in it builds the engine offline");
    c.engine_bundle->add_option("--out", c.bundle_out, "Where to write it (.tar.gz)")->required();
    c.engine_build = engine->add_subcommand(
        "build",
        "Build the engine on a cluster for a run's environment (its image, or the profile's env_setup), or "
        "find the one built before; prints engine=PATH fingerprint=HEX built|cached");
    c.engine_build->add_option("RUN", c.run_file, "Run config JSON (its slurm section: image, partition)")
        ->required();
    c.engine_build->add_option("--cluster", c.cluster, "Cluster profile")->required();
    c.engine_build->add_option("--bundle", c.bundle, "Engine bundle (default: the one this app carries)");
    c.engine_build->add_flag("--log", c.build_log, "Stream the build job's log to stderr while it builds");
    add_ssh_options(c.engine_build, c.ssh);
    c.engine_list = engine->add_subcommand("list", "The engines built on a cluster, with their manifests");
    c.engine_list->add_option("--cluster", c.cluster, "Cluster profile")->required();
    add_ssh_options(c.engine_list, c.ssh);

    c.submit = cli.add_subcommand("submit",
                                  "Deploy a run (or a pipeline: a chain of jobs) to a cluster and submit it; "
                                  "the last line is run_id=... job_id=...");
    c.submit->add_option("RUN", c.run_file, "Run config JSON")->required();
    c.submit->add_option("--cluster", c.cluster, "Cluster profile")->required();
    c.submit->add_option("--name", c.run_name, "Run name (overrides the config's)");
    c.submit->add_option("--engine", c.engine,
                         "slipway-engine to deploy to a bare-metal cluster (default: next to slipway)");
    c.submit->add_option(
        "--inputs", c.inputs,
        "Folder that relative input paths are relative to (they are uploaded; absolute paths are "
        "on the cluster already)");
    c.submit->add_flag(
        "--exclude-bad", c.exclude_bad,
        "Leave out the nodes the cluster's last `slipway doctor` found slow or failed (#SBATCH "
        "--exclude)");
    c.submit->add_option("OVERRIDES", c.overrides, "After --: training-script flags, e.g. -- --max_steps 40");
    add_ssh_options(c.submit, c.ssh);

    c.run_local = cli.add_subcommand(
        "run",
        "Run a run config on This computer (as the app's Run button does): progress as it trains, the run in "
        "the history; Ctrl-C stops it (the engine saves a checkpoint)");
    c.run_local->add_option("RUN", c.run_file, "Run config JSON")->required();
    c.run_local->add_option("--name", c.run_name, "Run name (overrides the config's)");
    c.run_local->add_option("--engine", c.engine,
                            "slipway-engine to run (default: $SLIPWAY_ENGINE, next to slipway, PATH)");
    c.run_local->add_option("--inputs", c.inputs, "Folder that relative input paths are relative to");
    c.run_local->add_option("--runs-dir", c.runs_dir,
                            "Where the run's folder goes (default ~/.local/share/slipway/local-runs)");
    c.run_local->add_flag("--raw", c.raw, "Print every log line as it is, not only the metrics");
    c.run_local->add_option("OVERRIDES", c.overrides,
                            "After --: training-script flags, e.g. -- --max_steps 40");

    CLI::App* pipeline = cli.add_subcommand(
        "pipeline",
        "Pipelines: a chain of engine steps (tokenizer, adapt-vocab, train, lep, eval) in one JSON file");
    pipeline->require_subcommand(1);
    c.pipeline_validate =
        pipeline->add_subcommand("validate", "Check a pipeline file; errors name the JSON pointer");
    c.pipeline_validate->add_option("PIPELINE", c.run_file, "Pipeline JSON")->required();
    c.pipeline_render = pipeline->add_subcommand(
        "render",
        "Print the sbatch script of every step of the chain (`slipway submit PIPELINE.json` runs them)");
    c.pipeline_render->add_option("PIPELINE", c.run_file, "Pipeline JSON")->required();
    c.pipeline_render->add_option("--cluster", c.cluster, "Cluster profile")->required();
    c.pipeline_run = pipeline->add_subcommand(
        "run", "Run the steps in order on This computer with the local engine; stops at the first failure");
    c.pipeline_run->add_option("PIPELINE", c.run_file, "Pipeline JSON")->required();
    c.pipeline_run->add_option("--engine", c.engine, "slipway-engine to run (default: next to slipway)");
    c.pipeline_run->add_option("--inputs", c.inputs, "Folder that relative input paths are relative to");
    c.pipeline_run->add_option(
        "--runs-dir", c.runs_dir,
        "Where the pipeline's folder goes (default ~/.local/share/slipway/local-runs)");

    DoctorOptions& d = c.doctor_options;
    c.doctor = cli.add_subcommand(
        "doctor",
        "Health-check a cluster's nodes with a short job: nvidia-smi (GPUs, driver, ECC, clocks), bench-comm "
        "within each node and across them (NCCL on GPUs, Gloo on CPUs), the master's rendezvous port. Prints "
        "each node ok / slow / failed and the nodes to exclude; saves the report for submit --exclude-bad. "
        "Exit 0: all ok, 3: some node slow or failed, or the crossing between nodes, 1: the doctor could not "
        "run");
    c.doctor->add_option("CLUSTER", c.cluster_name, "Cluster profile")->required();
    c.doctor->add_option("--partition", d.partition, "Partition (default: the profile's, else Slurm's)");
    auto* nodes = c.doctor->add_option("--nodes", d.nodes, "Number of nodes (default: every usable node)")
                      ->check(CLI::PositiveNumber);
    c.doctor->add_option("--nodelist", d.nodelist, "Exactly these nodes (comma-separated)")
        ->delimiter(',')
        ->excludes(nodes);
    c.doctor->add_option("--exclude", d.exclude, "Leave these nodes out (comma-separated)")->delimiter(',');
    c.doctor
        ->add_option("--gpus-per-node", d.gpus_per_node, "GPUs per node, one NCCL rank each (default: sinfo)")
        ->check(CLI::Range(0, 64));
    c.doctor->add_option("--cpu-ranks", d.cpu_ranks, "Gloo ranks per node on CPU nodes")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    c.doctor
        ->add_option(
            "--fabric", d.fabric,
            "Expected busbw from this fabric: auto (from the GPUs), cpu-tcp, pcie, a100-hdr, h100-ndr")
        ->capture_default_str();
    c.doctor
        ->add_option("--expect-busbw", d.expect_busbw_gbps,
                     "Expected busbw in GB/s within and across nodes (overrides --fabric)")
        ->check(CLI::PositiveNumber);
    c.doctor
        ->add_option("--slow-fraction", d.slow_fraction,
                     "A node below this share of the expected (or the nodes' median) busbw is slow")
        ->check(CLI::Range(0.01, 1.0))
        ->capture_default_str();
    c.doctor->add_option("--sizes", d.sizes, "bench-comm allreduce sizes")->capture_default_str();
    c.doctor->add_option("--iters", d.iters, "bench-comm timed iterations per size")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    c.doctor
        ->add_option("--step-timeout", d.step_timeout_s, "Seconds each check and each bench-comm may take")
        ->check(CLI::Range(5, 86400))
        ->capture_default_str();
    c.doctor->add_option("--time", d.job_minutes, "The job's time limit in minutes")
        ->check(CLI::Range(1, 10080))
        ->capture_default_str();
    c.doctor->add_option(
        "--deadline", d.deadline_s,
        "Seconds to wait for the job, queueing included, before cancelling it (default: --time + 5 "
        "minutes)");
    c.doctor->add_option("--image", d.image, "pyxis clusters: the container image holding slipway-engine");
    c.doctor->add_option("--engine", d.engine,
                         "slipway-engine to deploy to a bare-metal cluster (default: next to slipway)");
    c.doctor->add_option("--remote-engine", d.remote_engine,
                         "An engine already on the cluster (absolute path)");
    c.doctor->add_flag("--shared", d.shared, "Do not ask for whole nodes (--exclusive)");
    c.doctor->add_flag("--json", d.json, "Print the report as JSON");
    c.doctor->add_flag("--no-save", d.no_save, "Do not keep the report for submit --exclude-bad");
    add_ssh_options(c.doctor, c.ssh);

    c.status = cli.add_subcommand("status", "State of all submitted runs, or of one");
    c.status->add_option("RUN_ID", c.run_id, "Run id (as submit printed it)");
    c.cancel = cli.add_subcommand("cancel", "Cancel a run's Slurm job (scancel)");
    c.cancel->add_option("RUN_ID", c.run_id, "Run id")->required();
    c.follow = cli.add_subcommand(
        "follow",
        "Print train_loss and eval_accuracy as the job logs them; ends with final_state=STATE "
        "(exit 0 only for COMPLETED)");
    c.follow->add_option("RUN_ID", c.run_id, "Run id")->required();
    c.follow->add_option("--interval", c.interval_s, "Seconds between polls")->capture_default_str();
    c.follow->add_flag("--raw", c.raw, "Print every log line, not just the metrics");
    c.follow
        ->add_option("--outage-limit", c.outage_limit_s,
                     "Seconds a lost connection is retried (with backoff) before follow gives up")
        ->capture_default_str();
    c.fetch = cli.add_subcommand(
        "fetch", "Download the run's slurm output, run.json, script and output/ (MLLOG, model)");
    c.fetch->add_option("RUN_ID", c.run_id, "Run id")->required();
    c.fetch->add_option("--to", c.fetch_to, "Local folder (default ./RUN_ID)");
    c.fetch->add_flag("--checkpoints", c.checkpoints, "Also download output/checkpoint-* folders");
    for (CLI::App* command : {c.status, c.cancel, c.follow, c.fetch})
        add_ssh_options(command, c.ssh);
}

std::optional<int> run_remote_commands(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    const std::pair<CLI::App*, int (*)(RemoteCommands&, std::ostream&, std::ostream&)> table[] = {
        {c.clusters_list, run_clusters_list},
        {c.clusters_add, run_clusters_add},
        {c.clusters_test, run_clusters_test},
        {c.clusters_remove, run_clusters_remove},
        {c.render_sbatch, run_render_sbatch},
        {c.render_dockerfile, run_render_dockerfile},
        {c.image_build, run_image_build},
        {c.engine_bundle, run_engine_bundle},
        {c.engine_build, run_engine_build},
        {c.engine_list, run_engine_list},
        {c.submit, run_submit},
        {c.pipeline_validate, run_pipeline_validate},
        {c.pipeline_render, run_pipeline_render},
        {c.pipeline_run, run_pipeline_local},
        {c.run_local, run_local},
        {c.status, run_status},
        {c.cancel, run_cancel},
        {c.follow, run_follow},
        {c.fetch, run_fetch},
        {c.doctor, run_doctor},
    };
    for (const auto& [command, run] : table) {
        if (command && command->parsed()) return run(c, out, err);
    }
    return std::nullopt;
}

}  // namespace slipway::app
