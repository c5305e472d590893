// The train command (train_command.h): load + override + validate the config, then train::train.
#include "cli/train_command.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <ostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "contract/hf_flags.h"
#include "contract/mllog_keys.h"
#include "contract/run_config.h"
#include "contract/version.h"
#include "dist/env.h"
#include "train/fault_injection.h"
#include "train/trainer.h"

namespace slipway::engine {
namespace {

std::atomic<bool> g_stop_requested{false};

// SIGTERM (scancel, Slurm's time limit, the launcher stopping a run): finish the step, checkpoint, stop.
// A second SIGTERM is not special: Slurm follows up with SIGKILL after KillWait anyway.
extern "C" void request_stop(int) {
    g_stop_requested.store(true);
}

// Without --threads: OMP_NUM_THREADS when set (torchrun and our launcher set it), else this node's cores
// shared among its ranks.
int default_threads(const dist::DistEnv& env) {
    if (const char* omp = std::getenv("OMP_NUM_THREADS"); omp && std::atoi(omp) > 0) return std::atoi(omp);
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, cores / static_cast<int>(std::max<int64_t>(1, env.local_world_size)));
}

struct TrainCommandOptions {
    std::string config_path;
    int threads = 0;
    int64_t stop_after_steps = 0;
    bool resume_latest_if_any = false;
};

// VmHWM of /proc/self/status in KiB (0 where there is none).
long peak_resident_kib() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
    }
    return 0;
}

int run_train(const TrainCommandOptions& o, const std::vector<std::string>& flags, std::ostream& out,
              std::ostream& err) {
    Result<nlohmann::json> json = read_run_document(o.config_path);
    if (!json.ok()) {
        err << json.error() << "\n";
        return 1;
    }
    ParsedRunConfig parsed = parse_run_config(*json);
    if (!parsed.problems.empty()) {
        err << o.config_path << ": invalid run config:\n" << format_problems(parsed.problems);
        return 1;
    }
    Result<FlagReport> overrides = apply_hf_flags(parsed.config, flags);
    if (!overrides.ok()) {
        err << overrides.error() << "\n";
        return 1;
    }
    for (const std::string& note : overrides->notes)
        err << "note: " << note << "\n";
    Result<dist::DistEnv> dist_env = dist::resolve_dist_env(dist::process_env());
    if (!dist_env.ok()) {
        err << "train: " << dist_env.error() << "\n";
        return 1;
    }
    train::TrainOptions options;
    options.dist_env = *dist_env;
    options.stop_requested = &g_stop_requested;
    std::signal(SIGTERM, request_stop);
    options.threads = o.threads > 0 ? o.threads : default_threads(*dist_env);
    options.stop_after_steps = o.stop_after_steps;
    options.resume_latest_if_any = o.resume_latest_if_any;
    if (const char* restarts = std::getenv("SLURM_RESTART_COUNT")) options.restart = std::atoll(restarts);
    options.engine_version = kVersion;
    train::throw_here_if_injected(dist_env->rank, 0, [] {});
    Result<train::TrainReport> report = train::train(parsed.config, options, out, err);
    if (!report.ok()) {
        err << "train: " << report.error() << "\n";
        if (dist_env->world_size > 1) {
            // A peer is gone, or this rank failed mid-step: the communication threads may wait on a peer
            // forever (the trainer abandoned them), so no unwinding.
            out.flush();
            err.flush();
            std::cout.flush();
            std::cerr.flush();
            std::_Exit(1);
        }
        return 1;
    }
    if (report->interrupted) {
        err << "train: stopped by SIGTERM after " << report->steps << " steps; checkpoint in "
            << report->output_dir << "\n";
        return 128 + SIGTERM;
    }
    // Every rank's own high-water mark: what a per-device memory budget (and the planner) is about.
    if (const long peak_kib = peak_resident_kib(); peak_kib > 0)
        err << "train: rank " << dist_env->rank << ": peak resident memory " << peak_kib / 1024 << " MiB\n";
    if (report->status == run_stop_status::kAborted && o.stop_after_steps > 0) return 0;
    err << "train: " << report->status << " after " << report->steps << " steps; final train loss "
        << report->final_train_loss << ", eval loss " << report->final_eval_loss << "; outputs in "
        << report->output_dir << "\n";
    return 0;
}

}  // namespace

void add_train_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    auto options = std::make_shared<TrainCommandOptions>();
    CLI::App* cmd =
        app.add_subcommand("train", "Train from a run config; --flag value pairs after it override fields");
    cmd->add_option("config", options->config_path, "Run config JSON")->required()->check(CLI::ExistingFile);
    cmd->add_option("--threads", options->threads,
                    "Torch threads (0 = OMP_NUM_THREADS, else the cores divided among this node's ranks)");
    cmd->add_option("--stop-after-steps", options->stop_after_steps,
                    "Stop after N steps as if interrupted (tests of resume; checkpoints follow save_steps)");
    cmd->add_flag("--resume-latest-if-any", options->resume_latest_if_any,
                  "A restarted job (the sbatch script passes it on a requeue): resume from the newest "
                  "checkpoint in output_dir when there is one, else as the config says");
    cmd->allow_extras();
    cmd->callback([cmd, options, exit_code, &out, &err] {
        *exit_code = run_train(*options, cmd->remaining(), out, err);
    });
}

}  // namespace slipway::engine
