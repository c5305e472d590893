// weights.h: name/shape-checked loading, HF-style init, and HF folder saving through io::safetensors.
#include "model/weights.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "contract/file_system.h"
#include "contract/run_config.h"
#include "model/nf4_io.h"
#include "model/qlora.h"
#include "model/tensor_io.h"

namespace slipway::model {

Result<torch::ScalarType> dtype_named(const std::string& name) {
    if (name == "float32") return torch::kFloat32;
    if (name == "bfloat16") return torch::kBFloat16;
    if (name == "float16") return torch::kFloat16;
    return Status::Error("dtype \"" + name + "\" must be float32, bfloat16 or float16");
}

Status load_weights(LlamaForCausalLM& model, const io::Checkpoint& checkpoint,
                    const std::set<std::string>& loaded_elsewhere) {
    torch::NoGradGuard no_grad;
    std::set<std::string> used = loaded_elsewhere;
    for (auto& item : model->named_parameters()) {
        const std::string& name = item.key();
        torch::Tensor& param = item.value();
        const auto it = checkpoint.tensors().find(name);
        if (it == checkpoint.tensors().end())
            return Status::Error("missing weight \"" + name + "\" " + shape_text(param.sizes().vec()));
        const io::TensorView& view = it->second;
        if (view.shape != param.sizes().vec()) {
            return Status::Error("weight \"" + name + "\": checkpoint shape " + shape_text(view.shape) +
                                 ", model expects " + shape_text(param.sizes().vec()));
        }
        // A view of the mapped bytes; copy_ converts to the parameter's dtype.
        Result<torch::Tensor> source = tensor_of(view);
        if (!source.ok()) return Status::Error("weight \"" + name + "\": " + source.error());
        param.copy_(*source);
        used.insert(name);
    }
    for (const auto& [name, view] : checkpoint.tensors()) {
        if (used.count(name)) continue;
        if (name.find("rotary_emb.inv_freq") != std::string::npos) continue;  // old HF checkpoints store it
        if (name == "lm_head.weight" && model->config.tie_word_embeddings)
            continue;  // tied: HF ignores it too
        return Status::Error("unexpected weight \"" + name + "\" " + shape_text(view.shape) +
                             " (not part of this model)");
    }
    return Status::Ok();
}

void init_weights(LlamaForCausalLM& model, uint64_t seed) {
    torch::NoGradGuard no_grad;
    torch::manual_seed(seed);
    const double std = model->config.initializer_range;
    for (auto& item : model->named_parameters()) {
        const std::string& name = item.key();
        torch::Tensor& param = item.value();
        if (name.find("norm") != std::string::npos) {
            param.fill_(1.0);
        } else {  // biases too: HF zeroes them, but random ones make the reference checks exercise them
            param.normal_(0.0, std);
        }
    }
}

Status write_hf_config(LlamaForCausalLM& model, const std::string& dir, const std::string& dtype) {
    LlamaConfig config = model->config;
    config.torch_dtype = dtype;
    return write_file_atomically(dir + "/config.json", config.to_json().dump(2) + "\n");
}

Status save_hf_model(LlamaForCausalLM& model, const std::string& dir, const std::string& dtype) {
    Result<torch::ScalarType> out_dtype = dtype_named(dtype);
    if (!out_dtype.ok()) return out_dtype.status();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::Error(dir + ": cannot create: " + ec.message());
    if (Status s = write_hf_config(model, dir, dtype); !s.ok()) return s;
    std::map<std::string, torch::Tensor> tensors;
    for (const auto& item : model->named_parameters())
        tensors[item.key()] = item.value().to(*out_dtype);
    return write_tensors(dir + "/model.safetensors", tensors);
}

Result<LlamaForCausalLM> load_hf_model(const std::string& dir) {
    Result<nlohmann::json> json = read_json_file(dir + "/config.json");
    if (!json.ok()) return json.status();
    Result<LlamaConfig> config = LlamaConfig::from_json(*json);
    if (!config.ok()) return Status::Error(dir + "/config.json: " + config.error());
    Result<std::optional<Bnb4bitConfig>> bnb = read_bnb_4bit_config(*json);
    if (!bnb.ok()) return Status::Error(dir + "/" + bnb.error());
    Result<io::Checkpoint> checkpoint = io::Checkpoint::open_folder(dir);
    if (!checkpoint.ok()) return checkpoint.status();
    LlamaForCausalLM model(*config);
    if (*bnb) {  // a bitsandbytes 4-bit folder: its layers stay 4-bit
        Result<int64_t> loaded = load_quantized_base(
            model, *checkpoint, qlora_settings((*bnb)->double_quant, (*bnb)->compute_dtype));
        if (!loaded.ok()) return Status::Error(dir + ": " + loaded.error());
        return model;
    }
    const Status loaded = load_weights(model, *checkpoint);
    if (!loaded.ok()) return Status::Error(dir + ": " + loaded.message());
    return model;
}

}  // namespace slipway::model
