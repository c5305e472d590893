// RunPlanner (run_plan.h): finds and caches the model's config.json, then asks slipway_plan.
#include "editor/run_plan.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <thread>

namespace slipway::app {
namespace {

// Nothing when the file is not there. (libstdc++'s file clock counts from 2174: times are negative.)
std::optional<int64_t> modification_time(const std::string& path) {
    std::error_code error;
    const auto time = std::filesystem::last_write_time(path, error);
    if (error) return std::nullopt;
    return static_cast<int64_t>(time.time_since_epoch().count());
}

}  // namespace

plan::HostFacts this_computer_host() {
    plan::HostFacts host;
    host.memory_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    host.cpu_cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
    return host;
}

RunPlanner::RunPlanner(plan::HostFacts host) : host_(host) {}

void RunPlanner::set_model_config(std::string config_json, std::string model_path) {
    picked_config_ = std::move(config_json);
    picked_for_ = picked_config_.empty() ? std::string() : std::move(model_path);
}

std::string RunPlanner::model_config_for(const RunConfig& config) const {
    return !picked_config_.empty() && config.model.path == picked_for_ ? picked_config_ : std::string();
}

const Result<model::LlamaConfig>& RunPlanner::read_model_config(const std::string& path) {
    const std::optional<int64_t> mtime = modification_time(path);
    if (path != read_path_ || mtime != read_mtime_) {
        read_path_ = path;
        read_mtime_ = mtime;
        read_ = !mtime ? Result<model::LlamaConfig>::Error(path + " does not exist on this computer")
                       : model::LlamaConfig::from_file(path);
    }
    return read_;
}

RunPlanResult RunPlanner::plan(const RunConfig& config) {
    RunPlanResult result;
    const std::string picked = model_config_for(config);
    if (picked.empty() && config.model.path.empty()) {
        result.problem = "needs the model's config.json: set /model/path";
        return result;
    }
    std::filesystem::path model_dir = config.model.path;
    if (model_dir.is_relative() && !base_dir_.empty())
        model_dir = std::filesystem::path(base_dir_) / model_dir;
    result.model_config = picked.empty() ? (model_dir / "config.json").string() : picked;

    const Result<model::LlamaConfig>& model = read_model_config(result.model_config);
    if (!model.ok()) {
        // Not here at all: the folder is on the cluster. Here but unreadable: say what is wrong with it.
        result.needs_model_config = picked.empty() && !read_mtime_;
        result.problem = result.needs_model_config
                             ? "needs the model's config.json: " + result.model_config +
                                   " is not on this computer (a cluster path?); choose a local copy"
                             : model.error();
        return result;
    }
    Result<plan::Plan> made = plan::make_plan(config, *model, host_);
    if (!made.ok()) {
        result.problem = made.error();
        return result;
    }
    result.plan = std::move(*made);
    return result;
}

}  // namespace slipway::app
