// weights.h: name/shape-checked loading, HF-style init, and HF folder saving through io::safetensors.
#include "model/weights.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <torch/torch.h>

#include <nlohmann/json.hpp>

namespace slipway::model {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

Result<torch::ScalarType> torch_dtype(io::DType dtype) {
    switch (dtype) {
        case io::DType::kF32:
            return torch::kFloat32;
        case io::DType::kBF16:
            return torch::kBFloat16;
        case io::DType::kF16:
            return torch::kFloat16;
        case io::DType::kF64:
            return torch::kFloat64;
        default:
            return Status::Error(std::string("dtype ") + io::dtype_name(dtype) + " is not a weight dtype");
    }
}

Result<io::DType> io_dtype(const std::string& name) {
    if (name == "float32") return io::DType::kF32;
    if (name == "bfloat16") return io::DType::kBF16;
    if (name == "float16") return io::DType::kF16;
    return Status::Error("dtype \"" + name + "\" must be float32, bfloat16 or float16");
}

}  // namespace

Status load_weights(LlamaForCausalLM& model, const io::Checkpoint& checkpoint) {
    torch::NoGradGuard no_grad;
    std::set<std::string> used;
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
        Result<torch::ScalarType> dtype = torch_dtype(view.dtype);
        if (!dtype.ok()) return Status::Error("weight \"" + name + "\": " + dtype.error());
        // from_blob views the mapped bytes; copy_ converts to the parameter's dtype.
        const torch::Tensor source = torch::from_blob(const_cast<uint8_t*>(view.data), view.shape,
                                                      torch::TensorOptions().dtype(*dtype));
        param.copy_(source);
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
        } else {
            param.normal_(0.0, std);
        }
    }
}

Status save_hf_model(LlamaForCausalLM& model, const std::string& dir, const std::string& dtype) {
    Result<io::DType> out_dtype = io_dtype(dtype);
    if (!out_dtype.ok()) return out_dtype.status();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::Error(dir + ": cannot create: " + ec.message());
    LlamaConfig config = model->config;
    config.torch_dtype = dtype;
    {
        std::ofstream out(dir + "/config.json");
        out << config.to_json().dump(2) << "\n";
        if (!out) return Status::Error(dir + "/config.json: write failed");
    }
    std::vector<torch::Tensor> keep_alive;
    std::map<std::string, io::TensorView> views;
    const torch::ScalarType target = *torch_dtype(*out_dtype);
    for (const auto& item : model->named_parameters()) {
        const std::string& name = item.key();
        torch::Tensor t = item.value().detach().to(torch::kCPU, target).contiguous();
        io::TensorView view;
        view.dtype = *out_dtype;
        view.shape = t.sizes().vec();
        view.data = static_cast<const uint8_t*>(t.data_ptr());
        view.nbytes = static_cast<size_t>(t.numel()) * t.element_size();
        views.emplace(name, view);
        keep_alive.push_back(std::move(t));
    }
    return io::write_safetensors(dir + "/model.safetensors", views);
}

Result<LlamaForCausalLM> load_hf_model(const std::string& dir) {
    Result<LlamaConfig> config = LlamaConfig::from_file(dir + "/config.json");
    if (!config.ok()) return config.status();
    Result<io::Checkpoint> checkpoint = io::Checkpoint::open_folder(dir);
    if (!checkpoint.ok()) return checkpoint.status();
    LlamaForCausalLM model(*config);
    const Status loaded = load_weights(model, *checkpoint);
    if (!loaded.ok()) return Status::Error(dir + ": " + loaded.message());
    return model;
}

}  // namespace slipway::model
