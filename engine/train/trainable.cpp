// trainable.h: requires_grad by adapter method, and AdamW parameter groups as HF's Trainer builds them.
#include "train/trainable.h"

#include <torch/torch.h>

#include "model/lora.h"

namespace slipway::train {
namespace {

bool is_embedding_or_head(const std::string& name) {
    return name == "model.embed_tokens.weight" || name == "lm_head.weight";
}

}  // namespace

bool decays_weight(const std::string& name) {
    return name.find("norm") == std::string::npos && name.find("bias") == std::string::npos;
}

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
            train = name.find(".lora_A.") != std::string::npos ||
                    name.find(".lora_B.") != std::string::npos || model::in_modules_to_save(name, adapter);
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

std::unique_ptr<FlatAdamW> make_adamw(const Trainable& trainable, const TrainingConfig& t) {
    std::vector<bool> decay;
    for (const std::string& name : trainable.names)
        decay.push_back(decays_weight(name));
    return std::make_unique<FlatAdamW>(trainable.names, trainable.tensors, decay, t);
}

}  // namespace slipway::train
