// Which parameters train in each adapter method, and AdamW with HF's parameter groups (no weight decay
// on norm weights and biases) over flat buffers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "model/llama.h"
#include "train/flat_adamw.h"

namespace slipway::train {

// Sets requires_grad by /adapter/method: full (all), embeddings (embed_tokens and lm_head only), lora
// (the adapters model::apply_lora added, and modules_to_save). Returns them in model order.
struct Trainable {
    std::vector<std::string> names;
    std::vector<torch::Tensor> tensors;
};
Result<Trainable> select_trainable(model::LlamaForCausalLM& model, const AdapterConfig& adapter);

// HF's parameter groups: no weight decay for the parameters of LayerNorm-like modules and for biases.
bool decays_weight(const std::string& name);

// AdamW over the trainable parameters in two groups: with weight decay, and without (norms, biases).
std::unique_ptr<FlatAdamW> make_adamw(const Trainable& trainable, const TrainingConfig& training);

}  // namespace slipway::train
