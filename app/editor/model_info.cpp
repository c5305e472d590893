// Model shape from config.json and the LoRA target names.
#include "editor/model_info.h"

namespace slipway::app {

Result<ModelShape> read_model_shape(const std::string& model_dir) {
    return read_model_config(model_dir + "/config.json");
}

Result<ModelShape> read_model_config(const std::string& config_json) {
    Result<nlohmann::json> j = read_json_file(config_json);
    if (!j.ok()) return j.status();
    Result<model::LlamaConfig> config = model::LlamaConfig::from_json(*j);
    if (!config.ok()) return Result<ModelShape>::Error(config_json + ": " + config.error());
    ModelShape s;
    s.model_type = j->value("model_type", std::string());
    if (j->contains("architectures") && (*j)["architectures"].is_array() && !(*j)["architectures"].empty() &&
        (*j)["architectures"][0].is_string()) {
        s.architecture = (*j)["architectures"][0].get<std::string>();
    }
    s.config = *config;
    return s;
}

std::vector<std::string> linear_module_names(const ModelShape&) {
    // Every family the engine loads (LLaMA, Mistral, Qwen2-style) names its projections the same way.
    return {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
}

}  // namespace slipway::app
