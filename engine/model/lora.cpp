// lora.h: PEFT-compatible LoRA injection, saving, loading and merging.
#include "model/lora.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "contract/file_system.h"
#include "io/safetensors.h"
#include "model/tensor_io.h"
#include "model/weights.h"

namespace slipway::model {
Result<std::vector<std::string>> apply_lora(LlamaForCausalLM& model, const AdapterConfig& adapter) {
    if (adapter.use_dora) return Status::Error("/adapter/use_dora: DoRA is not supported yet");
    const bool all_linear = adapter.target_modules.size() == 1 && adapter.target_modules[0] == "all-linear";
    std::set<std::string> used_targets;
    std::vector<std::string> adapted;
    for (const auto& item : model->named_modules()) {
        auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value());
        const std::string& name = item.key();
        if (!linear || name.find("lora_") != std::string::npos) continue;
        bool targeted = all_linear && name != "lm_head";
        for (const std::string& target : adapter.target_modules) {
            if (!all_linear && module_name_matches(name, target)) {
                targeted = true;
                used_targets.insert(target);
            }
        }
        if (!targeted) continue;
        LoraSpec spec;
        spec.r = lora_rank_for(name, adapter);
        spec.alpha = lora_alpha_for(name, adapter);
        spec.dropout = adapter.lora_dropout;
        spec.rslora = adapter.use_rslora;
        linear->add_lora(spec);
        adapted.push_back(name);
    }
    if (!all_linear) {
        for (const std::string& target : adapter.target_modules) {
            if (!used_targets.count(target)) {
                return Status::Error("/adapter/target_modules: \"" + target +
                                     "\" matches no linear layer of the model");
            }
        }
    }
    if (adapted.empty()) return Status::Error("/adapter/target_modules: no layer was adapted");
    return adapted;
}

Status save_adapter(LlamaForCausalLM& model, const AdapterConfig& adapter, const std::string& base_model_path,
                    const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::Error(dir + ": cannot create: " + ec.message());
    nlohmann::ordered_json config = {
        {"peft_type", "LORA"},
        {"task_type", "CAUSAL_LM"},
        {"base_model_name_or_path", base_model_path},
        {"r", adapter.r},
        {"lora_alpha", adapter.lora_alpha},
        {"lora_dropout", adapter.lora_dropout},
        {"target_modules", adapter.target_modules.size() == 1 && adapter.target_modules[0] == "all-linear"
                               ? nlohmann::ordered_json("all-linear")
                               : nlohmann::ordered_json(adapter.target_modules)},
        {"modules_to_save", adapter.modules_to_save.empty()
                                ? nlohmann::ordered_json(nullptr)
                                : nlohmann::ordered_json(adapter.modules_to_save)},
        {"rank_pattern", adapter.rank_pattern},
        {"alpha_pattern", adapter.alpha_pattern},
        {"use_rslora", adapter.use_rslora},
        {"use_dora", false},
        {"bias", "none"},
        {"fan_in_fan_out", false},
        {"init_lora_weights", true},
        {"inference_mode", true},
        {"layers_to_transform", nullptr},
        {"layers_pattern", nullptr},
        {"revision", nullptr},
    };
    if (Status s = write_file_atomically(dir + "/adapter_config.json", config.dump(2) + "\n"); !s.ok())
        return s;
    std::map<std::string, torch::Tensor> tensors;
    for (const auto& item : model->named_parameters()) {
        const std::string& name = item.key();
        const bool lora =
            name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos;
        if (!lora && !in_modules_to_save(name, adapter)) continue;
        tensors[kPeftKeyPrefix + name] = item.value().to(torch::kFloat32);
    }
    return write_tensors(dir + "/adapter_model.safetensors", tensors);
}

Result<AdapterConfig> load_adapter(LlamaForCausalLM& model, const std::string& dir) {
    Result<nlohmann::json> json = read_json_file(dir + "/adapter_config.json");
    if (!json.ok()) return json.status();
    AdapterConfig adapter;
    adapter.method = "lora";
    try {
        const nlohmann::json& j = *json;
        if (j.value("peft_type", std::string("LORA")) != "LORA") {
            return Status::Error(dir + "/adapter_config.json: peft_type \"" +
                                 j["peft_type"].get<std::string>() + "\" is not LORA");
        }
        adapter.r = j.value("r", int64_t{8});
        adapter.lora_alpha = j.value("lora_alpha", 8.0);
        adapter.lora_dropout = j.value("lora_dropout", 0.0);
        adapter.use_rslora = j.value("use_rslora", false);
        adapter.use_dora = j.value("use_dora", false);
        const nlohmann::json& targets = j.at("target_modules");
        if (targets.is_string()) {
            if (targets.get<std::string>() != "all-linear") {
                return Status::Error(dir +
                                     "/adapter_config.json: target_modules as a regex is not supported");
            }
            adapter.target_modules = {"all-linear"};
        } else {
            adapter.target_modules = targets.get<std::vector<std::string>>();
        }
        if (j.contains("modules_to_save") && j["modules_to_save"].is_array()) {
            adapter.modules_to_save = j["modules_to_save"].get<std::vector<std::string>>();
        }
        if (j.contains("rank_pattern") && j["rank_pattern"].is_object()) {
            adapter.rank_pattern = j["rank_pattern"].get<std::map<std::string, int64_t>>();
        }
        if (j.contains("alpha_pattern") && j["alpha_pattern"].is_object()) {
            adapter.alpha_pattern = j["alpha_pattern"].get<std::map<std::string, double>>();
        }
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(dir + "/adapter_config.json: " + e.what());
    }
    Result<std::vector<std::string>> applied = apply_lora(model, adapter);
    if (!applied.ok()) return Status::Error(dir + ": " + applied.error());
    Result<io::Checkpoint> weights = io::Checkpoint::open_file(dir + "/adapter_model.safetensors");
    if (!weights.ok()) return weights.status();
    torch::NoGradGuard no_grad;
    std::map<std::string, torch::Tensor> params;
    for (auto& item : model->named_parameters())
        params[item.key()] = item.value();
    for (const auto& [key, view] : weights->tensors()) {
        if (key.rfind(kPeftKeyPrefix, 0) != 0)
            return Status::Error(dir + ": key \"" + key + "\" lacks the base_model.model. prefix");
        const std::string name = key.substr(std::string(kPeftKeyPrefix).size());
        const auto it = params.find(name);
        if (it == params.end())
            return Status::Error(dir + ": adapter weight \"" + key + "\" matches nothing in the model");
        if (it->second.sizes().vec() != view.shape) {
            return Status::Error(dir + ": adapter weight \"" + key + "\" " + shape_text(view.shape) +
                                 ", model expects " + shape_text(it->second.sizes().vec()));
        }
        Result<torch::Tensor> source = tensor_of(view);
        if (!source.ok()) return Status::Error(dir + ": adapter weight \"" + key + "\": " + source.error());
        it->second.copy_(*source);
    }
    for (const auto& [name, param] : params) {
        const bool lora =
            name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos;
        if (lora && !weights->tensors().count(kPeftKeyPrefix + name)) {
            return Status::Error(dir + ": adapter weight \"" + std::string(kPeftKeyPrefix) + name +
                                 "\" is missing");
        }
    }
    return adapter;
}

void merge_lora(LlamaForCausalLM& model) {
    for (const auto& item : model->named_modules()) {
        if (auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value()); linear && linear->has_lora())
            linear->merge_lora();
    }
}

}  // namespace slipway::model
