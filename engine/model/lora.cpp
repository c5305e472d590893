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
namespace {

// adapter_config.json fields of PEFT's LoraConfig (0.21) that, set, make an adapter compute something
// other than plain LoRA (or rsLoRA) or hold weights plain LoRA has not: refused by name, never loaded as
// plain LoRA.
struct UnsupportedLoraField {
    const char* field;
    const char* what;
};
constexpr UnsupportedLoraField kUnsupportedLoraFields[] = {
    {"use_dora", "DoRA (weight-decomposed LoRA)"},
    {"lora_bias", "a bias on lora_B"},
    {"fan_in_fan_out", "Conv1D (transposed) base weights"},
    {"layers_to_transform", "adapters on some layers only"},
    {"exclude_modules", "excluded modules"},
    {"trainable_token_indices", "trainable tokens"},
    {"layer_replication", "replicated layers"},
    {"target_parameters", "LoRA on parameters"},
    {"megatron_config", "Megatron parallel layers"},
    {"use_qalora", "QA-LoRA"},
    {"alora_invocation_tokens", "activated LoRA (aLoRA)"},
    {"velora_config", "VeLoRA"},
    {"monteclora_config", "MonteCLoRA"},
    {"use_bdlora", "block-diagonal LoRA (BD-LoRA)"},
    {"arrow_config", "Arrow routing"},
    {"kasa_config", "KaSA"},
};

// Python's bool() of a JSON value, as PEFT tests these fields: null, false, 0, "", [] and {} are unset.
bool json_truthy(const nlohmann::json& v) {
    if (v.is_null()) return false;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0;
    if (v.is_string()) return !v.get<std::string>().empty();
    return !v.empty();  // arrays and objects
}

}  // namespace

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
        // The output projection is applied as output_weight() (logits, chunked loss, decoding), never through
        // lm_head's forward: an adapter there would be trained as zero and loaded as nothing.
        if (name == "lm_head") {
            return Status::Error(
                "/adapter/target_modules: \"lm_head\": LoRA on the output layer is not supported "
                "(modules_to_save [\"lm_head\"] trains it in full)");
        }
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
    // A tied model's embedding trained in full is its output layer too. PEFT keeps the two tied only with
    // ensure_weight_tying and both keys; without, it would apply the trained matrix to the input side alone.
    const bool tied_embedding = !model->lm_head && in_modules_to_save("model.embed_tokens.weight", adapter);
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
    if (tied_embedding) config["ensure_weight_tying"] = true;
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
    if (tied_embedding) {
        tensors[std::string(kPeftKeyPrefix) + "lm_head.weight"] =
            tensors.at(std::string(kPeftKeyPrefix) + "model.embed_tokens.weight");
    }
    return write_tensors(dir + "/adapter_model.safetensors", tensors);
}

Result<AdapterConfig> load_adapter(LlamaForCausalLM& model, const std::string& dir) {
    Result<nlohmann::json> json = read_json_file(dir + "/adapter_config.json");
    if (!json.ok()) return json.status();
    AdapterConfig adapter;
    adapter.method = "lora";
    bool ensure_weight_tying = false;
    try {
        const nlohmann::json& j = *json;
        if (j.value("peft_type", std::string("LORA")) != "LORA") {
            return Status::Error(dir + "/adapter_config.json: peft_type \"" +
                                 j["peft_type"].get<std::string>() + "\" is not LORA");
        }
        for (const UnsupportedLoraField& u : kUnsupportedLoraFields) {
            if (j.contains(u.field) && json_truthy(j[u.field])) {
                return Status::Error(dir + "/adapter_config.json: " + u.field + " " + j[u.field].dump() +
                                     ": " + u.what + " is not supported (plain LoRA and rsLoRA are)");
            }
        }
        if (j.contains("bias") && j["bias"].is_string() && j["bias"].get<std::string>() != "none") {
            return Status::Error(dir + "/adapter_config.json: bias \"" + j["bias"].get<std::string>() +
                                 "\": trained base biases are not supported (bias \"none\" is)");
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
        ensure_weight_tying = j.value("ensure_weight_tying", false);
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(dir + "/adapter_config.json: " + e.what());
    }
    // Tied embeddings are one matrix here: an adapter that trains it in full must have kept it one in PEFT.
    const bool tied = !model->lm_head;
    if (tied && !ensure_weight_tying &&
        (in_modules_to_save("model.embed_tokens.weight", adapter) ||
         in_modules_to_save("lm_head.weight", adapter))) {
        return Status::Error(dir +
                             "/adapter_config.json: modules_to_save on a model with tied embeddings needs "
                             "ensure_weight_tying true (without it PEFT applies the trained embedding to the "
                             "input side alone; here input and output share one matrix)");
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
        if (tied && name == "lm_head.weight") continue;  // the tied matrix saved twice (compared below)
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
    const std::string head_key = std::string(kPeftKeyPrefix) + "lm_head.weight";
    if (const auto head = weights->tensors().find(head_key); tied && head != weights->tensors().end()) {
        const auto embed = weights->tensors().find(std::string(kPeftKeyPrefix) + "model.embed_tokens.weight");
        Result<torch::Tensor> a = tensor_of(head->second);
        if (embed == weights->tensors().end() || !a.ok())
            return Status::Error(dir + ": adapter weight \"" + head_key + "\" matches nothing in the model");
        Result<torch::Tensor> b = tensor_of(embed->second);
        if (!b.ok() || !torch::equal(a->to(torch::kFloat32), b->to(torch::kFloat32))) {
            return Status::Error(
                dir + ": adapter weight \"" + head_key +
                "\" differs from model.embed_tokens.weight; this model's embeddings are tied");
        }
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
