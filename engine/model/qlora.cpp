// qlora.h: quantizing, loading and saving QLoRA's 4-bit base.
#include "model/qlora.h"

#include <filesystem>
#include <set>

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "contract/file_system.h"
#include "model/nf4_io.h"
#include "model/nf4_weight.h"
#include "model/tensor_io.h"
#include "model/weights.h"

namespace slipway::model {

Result<int64_t> quantize_base(LlamaForCausalLM& model, const AdapterConfig& adapter) {
    if (adapter.bnb_4bit_quant_type != "nf4")
        return Status::Error("/adapter/bnb_4bit_quant_type: only nf4 is supported");
    Result<torch::ScalarType> compute = dtype_named(adapter.bnb_4bit_compute_dtype);
    if (!compute.ok()) return Status::Error("/adapter/bnb_4bit_compute_dtype: " + compute.error());
    int64_t bytes = 0;
    for (const auto& item : model->model->layers->named_modules()) {
        auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value());
        if (!linear || item.key().find("lora_") != std::string::npos) continue;
        if (Status s = linear->quantize_nf4(adapter.bnb_4bit_use_double_quant, *compute); !s.ok())
            return Status::Error("model.layers." + item.key() + ": " + s.message());
        bytes += linear->nf4->resident_bytes();
    }
    return bytes;
}

Result<int64_t> load_quantized_base(LlamaForCausalLM& model, const io::Checkpoint& checkpoint,
                                    const AdapterConfig& adapter) {
    Result<torch::ScalarType> compute = dtype_named(adapter.bnb_4bit_compute_dtype);
    if (!compute.ok()) return Status::Error("/adapter/bnb_4bit_compute_dtype: " + compute.error());
    std::set<std::string> quantized;
    int64_t bytes = 0;
    for (const auto& item : model->model->layers->named_modules()) {
        auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value());
        if (!linear || item.key().find("lora_") != std::string::npos || linear->quantized()) continue;
        const std::string name = "model.layers." + item.key() + ".weight";
        const auto it = checkpoint.tensors().find(name);
        if (it == checkpoint.tensors().end()) return Status::Error("missing weight \"" + name + "\"");
        const std::vector<int64_t> expected = {linear->out_features, linear->in_features};
        Result<Nf4Weight> q = Status::Error("");
        if (has_nf4_tensors(checkpoint, name)) {  // a "-bnb-4bit" folder: taken as it is
            q = read_nf4_tensors(checkpoint, name, expected);
            for (const std::string& suffix : nf4_key_suffixes())
                quantized.insert(name + suffix);
        } else {
            if (it->second.shape != expected) {
                return Status::Error("weight \"" + name + "\": checkpoint shape " +
                                     shape_text(it->second.shape) + ", model expects " +
                                     shape_text(expected));
            }
            Result<torch::Tensor> source = tensor_of(it->second);  // a view of the mapped bytes
            if (!source.ok()) return Status::Error("weight \"" + name + "\": " + source.error());
            q = quantize_nf4_weight(*source, adapter.bnb_4bit_use_double_quant);
        }
        if (!q.ok()) return Status::Error(name + ": " + q.error());
        bytes += q->resident_bytes();
        linear->set_nf4(std::make_shared<const Nf4Weight>(std::move(*q)), *compute);
        quantized.insert(name);
    }
    if (Status s = load_weights(model, checkpoint, quantized); !s.ok()) return s;
    return bytes;
}

AdapterConfig qlora_settings(bool double_quant, const std::string& compute_dtype) {
    AdapterConfig a;
    a.method = "qlora";
    a.bnb_4bit_use_double_quant = double_quant;
    a.bnb_4bit_compute_dtype = compute_dtype;
    return a;
}

Status save_quantized_model(LlamaForCausalLM& model, const AdapterConfig& adapter, const std::string& dir,
                            const std::string& dtype) {
    Result<torch::ScalarType> out_dtype = dtype_named(dtype);
    if (!out_dtype.ok()) return out_dtype.status();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::Error(dir + ": cannot create: " + ec.message());
    nlohmann::json config = model->config.to_json();
    config["torch_dtype"] = dtype;
    config["quantization_config"] =
        bnb_4bit_config_json({adapter.bnb_4bit_use_double_quant, adapter.bnb_4bit_compute_dtype});
    if (Status s = write_file_atomically(dir + "/config.json", config.dump(2) + "\n"); !s.ok()) return s;
    std::map<std::string, torch::Tensor> tensors;
    for (const auto& item : model->named_parameters())
        tensors[item.key()] = item.value().to(*out_dtype);
    for (const auto& item : model->model->layers->named_modules()) {
        auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value());
        if (linear && linear->nf4)
            add_nf4_tensors(tensors, "model.layers." + item.key() + ".weight", *linear->nf4);
    }
    return write_tensors(dir + "/model.safetensors", tensors);
}

void move_quantized_base(LlamaForCausalLM& model, const torch::Device& device) {
    for (const auto& item : model->model->layers->named_modules()) {
        auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value());
        if (linear && linear->nf4) linear->nf4 = std::make_shared<const Nf4Weight>(linear->nf4->to(device));
    }
}

}  // namespace slipway::model
