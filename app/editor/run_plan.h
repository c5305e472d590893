// The plan the run editor shows live: slipway_plan's peak memory per device, fits or why not, step time and
// time to train, for the document's run config. The model's config.json is read from model.path when that
// folder is on this computer, else from a local copy the user picked (the planner's --model-config). No
// widgets; config.json is read again only when its path or modification time changes; no network.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "contract/run_config.h"
#include "contract/status.h"
#include "model/llama_config.h"
#include "plan/plan.h"

namespace slipway::app {

// What the editor draws: a plan, or why there is none.
struct RunPlanResult {
    std::optional<plan::Plan> plan;
    std::string model_config;  // the config.json the plan read (or tried to)
    // No plan: why, in one sentence ("needs the model's config.json: ..."); empty with a plan.
    std::string problem;
    // model.path's config.json is not readable from this computer (a cluster path): a local copy helps.
    bool needs_model_config = false;
};

// This computer's RAM and cores: the device of a CPU run ("This computer", or a cluster node without GPUs
// when planned from here).
plan::HostFacts this_computer_host();

class RunPlanner {
public:
    explicit RunPlanner(plan::HostFacts host = this_computer_host());

    // Relative model paths (the presets' resources/demo/...) resolve against this folder.
    void set_base_dir(std::string dir) { base_dir_ = std::move(dir); }
    // A local config.json for the model at `model_path` (a cluster path); "" forgets it. It applies only
    // while model.path is `model_path`: another model gets its own config.json again.
    void set_model_config(std::string config_json, std::string model_path);
    // The local copy in use for this run config, or "".
    std::string model_config_for(const RunConfig& config) const;

    RunPlanResult plan(const RunConfig& config);

private:
    const Result<model::LlamaConfig>& read_model_config(const std::string& path);

    plan::HostFacts host_;
    std::string base_dir_;
    std::string picked_config_;  // the user's config.json ...
    std::string picked_for_;     // ... for this model.path
    // The last config.json read, keyed by path and modification time.
    std::string read_path_;
    std::optional<int64_t> read_mtime_;  // nothing: not there
    Result<model::LlamaConfig> read_ = Result<model::LlamaConfig>::Error("not read");
};

}  // namespace slipway::app
