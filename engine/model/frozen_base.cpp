// lay_out_frozen_base (frozen_base.h): one buffer per joint product, every frozen weight in one dtype.
#include "model/frozen_base.h"

#include <torch/torch.h>

#include "model/llama.h"

namespace slipway::model {
namespace {

bool frozen_float(const torch::Tensor& t) {
    return t.defined() && !t.requires_grad() && t.is_floating_point();
}

// Packs the weights of layers side by side ((out_i, C) each) into one (sum out_i, C) buffer of `dtype`,
// each weight becoming its view (rows in order): the joint product's AdjacentRows then reads them in place.
bool pack(std::initializer_list<LinearImpl*> layers, torch::ScalarType dtype) {
    int64_t rows = 0;
    for (LinearImpl* layer : layers) {
        if (layer->quantized() || !frozen_float(layer->weight)) return false;
        rows += layer->out_features;
    }
    const torch::Tensor& first = (*layers.begin())->weight;
    torch::Tensor joint = torch::empty({rows, first.size(1)}, first.options().dtype(dtype));  // (sum outs, C)
    int64_t at = 0;
    for (LinearImpl* layer : layers) {
        torch::Tensor view = joint.narrow(0, at, layer->out_features);  // (out_i, C)
        view.copy_(layer->weight);
        layer->weight.set_data(view);  // the module's member and its registered parameter alike
        at += layer->out_features;
    }
    return true;
}

}  // namespace

FrozenBaseLayout lay_out_frozen_base(LlamaForCausalLMImpl& model, torch::ScalarType dtype) {
    torch::NoGradGuard no_grad;
    FrozenBaseLayout layout;
    for (size_t i = 0; i < model.model->layers->size(); ++i) {
        DecoderLayerImpl& layer = *model.model->layers->ptr<DecoderLayerImpl>(i);
        AttentionImpl& attention = *layer.self_attn;
        layout.packed_groups +=
            pack({attention.q_proj.get(), attention.k_proj.get(), attention.v_proj.get()}, dtype);
        layout.packed_groups += pack({layer.mlp->gate_proj.get(), layer.mlp->up_proj.get()}, dtype);
    }
    for (auto& item : model.named_parameters()) {
        torch::Tensor& p = item.value();
        if (!frozen_float(p)) continue;
        if (p.scalar_type() != dtype) p.set_data(p.to(dtype));
        layout.converted_bytes += p.numel() * static_cast<int64_t>(p.element_size());
    }
    return layout;
}

torch::ScalarType frozen_base_dtype(const std::string& base_dtype, const std::string& adapter_method,
                                    bool bf16, const torch::Device& device) {
    if (base_dtype == "bfloat16") return torch::kBFloat16;
    if (base_dtype == "auto" && adapter_method == "lora" && bf16 && device.is_cuda()) return torch::kBFloat16;
    return torch::kFloat32;
}

}  // namespace slipway::model
