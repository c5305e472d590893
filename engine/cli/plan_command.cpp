// The plan command (plan_command.h): reads the run config and the model's config.json, asks the planner,
// prints a table or one JSON object.
#include "cli/plan_command.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "contract/run_config.h"
#include "plan/plan.h"

namespace slipway::engine {
namespace {

struct PlanOptions {
    std::string run_file;
    std::string model_config;  // empty: <model.path>/config.json
    bool json = false;
    double mfu = 0;  // 0: the planner's assumption
};

// This computer's RAM (MemTotal) and cores: the device of a CPU run.
plan::HostFacts this_computer() {
    plan::HostFacts host;
    host.cpu_cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    int64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit) {
        if (key == "MemTotal:") {
            host.memory_bytes = kib * 1024;
            break;
        }
    }
    return host;
}

int run_plan(const PlanOptions& options, std::ostream& out, std::ostream& err) {
    Result<RunConfig> config = load_run_config(options.run_file);
    if (!config.ok()) {
        err << config.error() << "\n";
        return 1;
    }
    const std::string model_config =
        options.model_config.empty() ? config->model.path + "/config.json" : options.model_config;
    Result<model::LlamaConfig> llama = model::LlamaConfig::from_file(model_config);
    if (!llama.ok()) {
        err << llama.error() << "\n";
        if (options.model_config.empty())
            err << "(the model folder may be on the cluster: give its config.json with --model-config)\n";
        return 1;
    }
    plan::PlanAssumptions assumptions;
    if (options.mfu > 0) assumptions.mfu_override = options.mfu;
    Result<plan::Plan> made = plan::make_plan(*config, *llama, this_computer(), assumptions);
    if (!made.ok()) {
        err << options.run_file << ": " << made.error() << "\n";
        return 1;
    }
    if (options.json) {
        out << plan::to_json(*made).dump(2) << "\n";
    } else {
        out << plan::format_plan(*made);
    }
    return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    auto options = std::make_shared<PlanOptions>();
    CLI::App* cmd = app.add_subcommand(
        "plan", "Predict a run's peak memory per device (broken down), whether it fits, and its step time");
    cmd->add_option("run", options->run_file, "Run config JSON")->required()->check(CLI::ExistingFile);
    cmd->add_option("--model-config", options->model_config,
                    "The model's config.json when its folder is not on this computer");
    cmd->add_flag("--json", options->json, "Print one JSON object");
    cmd->add_option("--mfu", options->mfu, "Model FLOPs utilization to assume (0-1)")
        ->check(CLI::Range(0.0, 1.0));
    cmd->callback([options, exit_code, &out, &err] { *exit_code = run_plan(*options, out, err); });
}

}  // namespace slipway::engine
