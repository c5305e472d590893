// trainable.h: requires_grad by adapter method, and AdamW parameter groups as HF's Trainer builds them.
#include "train/trainable.h"

#include <torch/torch.h>

#include "model/lora.h"

namespace slipway::train {
namespace {

bool is_embedding_or_head(const std::string& name) {
    return name == "model.embed_tokens.weight" || name == "lm_head.weight";
}

// HF: no decay for parameters of LayerNorm-like modules and for biases.
bool decays(const std::string& name) { return name.find("norm") == std::string::npos && name.find("bias") == std::string::npos; }

}  // namespace

Result<Trainable> select_trainable(model::LlamaForCausalLM& model, const AdapterConfig& adapter) {
    Trainable trainable;
    for (auto& item : model->named_parameters()) {
        const std::string& name = item.key();
        bool train = false;
        if (adapter.method == "full") {
            train = true;
        } else if (adapter.method == "embeddings") {
            train = is_embedding_or_head(name);
        } else {  // lora: the adapters (added by model::apply_lora) and modules_to_save
            train = name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos ||
                    model::in_modules_to_save(name, adapter);
        }
        item.value().set_requires_grad(train);
        if (train) {
            trainable.names.push_back(name);
            trainable.tensors.push_back(item.value());
        }
    }
    if (trainable.names.empty()) return Status::Error("/adapter/method: no parameter would train");
    return trainable;
}

std::unique_ptr<torch::optim::AdamW> make_adamw(model::LlamaForCausalLM& model, const TrainingConfig& t) {
    std::vector<torch::Tensor> with_decay, without_decay;
    for (auto& item : model->named_parameters()) {
        if (!item.value().requires_grad()) continue;
        (decays(item.key()) ? with_decay : without_decay).push_back(item.value());
    }
    auto options = [&t](double weight_decay) {
        return std::make_unique<torch::optim::AdamWOptions>(
            torch::optim::AdamWOptions(t.learning_rate).betas({t.adam_beta1, t.adam_beta2}).eps(t.adam_epsilon).weight_decay(weight_decay));
    };
    std::vector<torch::optim::OptimizerParamGroup> groups;
    if (!with_decay.empty()) groups.emplace_back(with_decay, options(t.weight_decay));
    if (!without_decay.empty()) groups.emplace_back(without_decay, options(0.0));
    return std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(t.learning_rate));
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
    for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

}  // namespace slipway::train
