// save_outputs (outputs.h).
#include <torch/torch.h>

#include "train/outputs.h"

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "contract/file_system.h"
#include "model/lora.h"
#include "model/tensor_io.h"
#include "model/weights.h"
#include "train/sharded_model.h"

namespace slipway::train {

namespace {

// The files that travel with tokenizer.json, so the output folder chats (generate --chat), exports to GGUF
// and loads in transformers with the template it was trained with.
constexpr const char* kTokenizerCompanions[] = {"tokenizer_config.json", "special_tokens_map.json",
                                                "chat_template.jinja", "generation_config.json"};

// What every run writes next to its weights: the tokenizer and its companions, and run.json. An explicit
// /data/chat_template becomes tokenizer_config.json's chat_template (the one transformers reads first).
Status save_run_files(const RunConfig& config, const std::string& engine_version, int64_t world_size) {
    const std::string& dir = config.training.output_dir;
    const std::string tokenizer =
        config.tokenizer.path.empty() ? config.model.path + "/tokenizer.json" : config.tokenizer.path;
    if (Status s = copy_file_atomically(tokenizer, dir + "/tokenizer.json"); !s.ok()) return s;
    // Each from the tokenizer's folder, else the model's (a demo tokenizer kept apart from its model).
    for (const char* name : kTokenizerCompanions) {
        for (const std::filesystem::path& from :
             {std::filesystem::path(tokenizer).parent_path(), std::filesystem::path(config.model.path)}) {
            std::error_code ec;
            if (!std::filesystem::is_regular_file(from / name, ec)) continue;
            if (Status s = copy_file_atomically((from / name).string(), dir + "/" + name); !s.ok()) return s;
            break;
        }
    }
    if (!config.data.chat_template.empty()) {
        Result<std::string> text = read_file(config.data.chat_template);
        if (!text.ok()) return text.status();
        nlohmann::ordered_json tokenizer_config = nlohmann::ordered_json::object();
        if (std::filesystem::exists(dir + "/tokenizer_config.json")) {
            Result<std::string> existing = read_file(dir + "/tokenizer_config.json");
            if (!existing.ok()) return existing.status();
            tokenizer_config = nlohmann::ordered_json::parse(*existing, nullptr, /*allow_exceptions=*/false);
            if (!tokenizer_config.is_object()) tokenizer_config = nlohmann::ordered_json::object();
        }
        tokenizer_config["chat_template"] = *text;
        if (Status s = write_file_atomically(dir + "/tokenizer_config.json", tokenizer_config.dump(2) + "\n");
            !s.ok())
            return s;
    }
    nlohmann::ordered_json run = {
        {"engine_version", engine_version}, {"world_size", world_size}, {"config", to_json(config)}};
    return write_file_atomically(dir + "/run.json", run.dump(2) + "\n");
}

// Trained weights stay fp32 unless the base was stored narrower.
std::string output_dtype(const RunConfig& config) {
    return config.model.init == "random" ? "float32" : config.model.dtype;
}

}  // namespace

Status save_outputs(model::LlamaForCausalLM& model, const RunConfig& config,
                    const std::string& engine_version, int64_t world_size) {
    const std::string& dir = config.training.output_dir;
    // LoRA: a PEFT adapter folder. Otherwise an HF model.
    const Status saved = config.adapter.uses_lora()
                             ? model::save_adapter(model, config.adapter, config.model.path, dir)
                             : model::save_hf_model(model, dir, output_dtype(config));
    if (!saved.ok()) return saved;
    return save_run_files(config, engine_version, world_size);
}

Status save_sharded_outputs(ShardedModel& sharded, const RunConfig& config, const std::string& engine_version,
                            bool writes) {
    const std::string& dir = config.training.output_dir;
    const int64_t world_size = sharded.comm().world_size;
    Status status = Status::Ok();
    if (config.adapter.uses_lora()) {  // the adapter is small: its units gathered together
        sharded.with_trainable_gathered([&] {
            if (writes) status = model::save_adapter(sharded.model(), config.adapter, config.model.path, dir);
        });
    } else {
        // An HF folder sharded one file per unit, with model.safetensors.index.json: one unit at a time.
        const auto dtype = model::dtype_named(output_dtype(config));
        if (!dtype.ok()) return dtype.status();
        const int64_t units = sharded.unit_count();
        int64_t index = 0, total_bytes = 0;
        nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
        sharded.for_each_unit(
            [&](const std::map<std::string, torch::Tensor>& tensors) {
                char name[64];
                std::snprintf(name, sizeof name, "model-%05lld-of-%05lld.safetensors",
                              static_cast<long long>(++index), static_cast<long long>(units));
                if (!writes || !status.ok()) return;
                std::map<std::string, torch::Tensor> converted;
                for (const auto& [key, value] : tensors) {
                    converted[key] = value.to(*dtype);
                    total_bytes += converted[key].numel() * converted[key].element_size();
                    weight_map[key] = name;
                }
                status = model::write_tensors(dir + "/" + name, converted);
            },
            /*only_trainable=*/false);
        if (writes && status.ok()) {
            status = model::write_hf_config(sharded.model(), dir, output_dtype(config));
            if (status.ok()) {
                const nlohmann::ordered_json index_json = {{"metadata", {{"total_size", total_bytes}}},
                                                           {"weight_map", weight_map}};
                status =
                    write_file_atomically(dir + "/model.safetensors.index.json", index_json.dump(2) + "\n");
            }
        }
    }
    if (!writes || !status.ok()) return status;
    return save_run_files(config, engine_version, world_size);
}

}  // namespace slipway::train
