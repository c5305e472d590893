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

namespace {

// The compute dtype of a QLoRA adapter config, refusing what the engine cannot quantize.
Result<torch::ScalarType> checked_compute_dtype(const AdapterConfig& adapter) {
    if (adapter.bnb_4bit_quant_type != "nf4")
        return Status::Error("/adapter/bnb_4bit_quant_type: only nf4 is supported");
    Result<torch::ScalarType> compute = dtype_named(adapter.bnb_4bit_compute_dtype);
    if (!compute.ok()) return Status::Error("/adapter/bnb_4bit_compute_dtype: " + compute.error());
    return compute;
}

// `name`'s NF4 form from a checkpoint (errors leave the name to the caller): its 4-bit tensors as they are (a
// "-bnb-4bit" folder), else its weight quantized from the mapped bytes (never held in full precision as a
// parameter).
Result<Nf4Weight> nf4_from_checkpoint(const io::Checkpoint& checkpoint, const std::string& name,
                                      const LinearImpl& linear, bool double_quant,
                                      std::set<std::string>* used) {
    const auto it = checkpoint.tensors().find(name);
    if (it == checkpoint.tensors().end()) return Status::Error("missing from the model folder");
    const std::vector<int64_t> expected = {linear.out_features, linear.in_features};
    if (used) used->insert(name);
    if (has_nf4_tensors(checkpoint, name)) {
        if (used) {
            for (const std::string& suffix : nf4_key_suffixes())
                used->insert(name + suffix);
        }
        return read_nf4_tensors(checkpoint, name, expected);
    }
    if (it->second.shape != expected) {
        return Status::Error("checkpoint shape " + shape_text(it->second.shape) + ", model expects " +
                             shape_text(expected));
    }
    Result<torch::Tensor> source = tensor_of(it->second);  // a view of the mapped bytes
    if (!source.ok()) return source.status();
    Result<Nf4Weight> quantized = quantize_nf4_weight(*source, double_quant);
    io::release_pages(it->second);  // read once: the full-precision pages need not stay resident
    return quantized;
}

}  // namespace

Result<int64_t> quantize_layer(LlamaForCausalLM& model, const AdapterConfig& adapter, int64_t layer,
                               const io::Checkpoint* checkpoint, const torch::Device& device,
                               std::set<std::string>* used) {
    Result<torch::ScalarType> compute = checked_compute_dtype(adapter);
    if (!compute.ok()) return compute.status();
    const std::string prefix = "model.layers." + std::to_string(layer) + ".";
    int64_t bytes = 0;
    for (const auto& item : model->model->layers->ptr(static_cast<size_t>(layer))->named_modules()) {
        auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value());
        if (!linear || item.key().find("lora_") != std::string::npos) continue;
        if (!linear->quantized()) {
            const std::string name = prefix + item.key() + ".weight";
            Result<Nf4Weight> q =
                checkpoint
                    ? nf4_from_checkpoint(*checkpoint, name, *linear, adapter.bnb_4bit_use_double_quant, used)
                    : quantize_nf4_weight(linear->weight, adapter.bnb_4bit_use_double_quant);
            if (!q.ok()) return Status::Error(name + ": " + q.error());
            if (q->packed.device() != device) *q = q->to(device);
            linear->set_nf4(std::make_shared<const Nf4Weight>(std::move(*q)), *compute);
        }
        bytes += linear->nf4->resident_bytes();
    }
    return bytes;
}

Result<int64_t> quantize_base(LlamaForCausalLM& model, const AdapterConfig& adapter) {
    const torch::Device device = model->parameters().front().device();
    int64_t bytes = 0;
    for (size_t layer = 0; layer < model->model->layers->size(); ++layer) {
        Result<int64_t> b = quantize_layer(model, adapter, static_cast<int64_t>(layer), nullptr, device);
        if (!b.ok()) return b.status();
        bytes += *b;
    }
    return bytes;
}

Result<int64_t> load_quantized_base(LlamaForCausalLM& model, const io::Checkpoint& checkpoint,
                                    const AdapterConfig& adapter) {
    std::set<std::string> quantized;
    int64_t bytes = 0;
    for (size_t layer = 0; layer < model->model->layers->size(); ++layer) {
        Result<int64_t> b =
            quantize_layer(model, adapter, static_cast<int64_t>(layer), &checkpoint, torch::kCPU, &quantized);
        if (!b.ok()) return b.status();
        bytes += *b;
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
