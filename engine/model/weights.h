// Moving weights between LlamaForCausalLM and HF folders: load with a check of every key and shape,
// random init as HF does, and save as config.json + model.safetensors.
#pragma once

#include <set>
#include <string>

#include "contract/status.h"
#include "io/safetensors.h"
#include "model/llama.h"

namespace slipway::model {

// Copies every parameter from `checkpoint` (converting F32/BF16/F16 to the parameter's dtype). A missing
// key, an unexpected key or a shape mismatch is an error naming the key and both shapes.
// Keys in `loaded_elsewhere` (QLoRA's weights, quantized straight from the checkpoint) count as used.
Status load_weights(LlamaForCausalLM& model, const io::Checkpoint& checkpoint,
                    const std::set<std::string>& loaded_elsewhere = {});

// HF's _init_weights: Linear and Embedding ~ normal(0, initializer_range), norms at 1. Seeded.
void init_weights(LlamaForCausalLM& model, uint64_t seed);

// "float32" | "bfloat16" | "float16" as a torch dtype; anything else is an error naming it.
Result<torch::ScalarType> dtype_named(const std::string& name);
// Writes `dir`/config.json: the model's config with torch_dtype set to `dtype`.
Status write_hf_config(LlamaForCausalLM& model, const std::string& dir, const std::string& dtype);
// Writes `dir`/config.json and `dir`/model.safetensors in `dtype` ("float32" | "bfloat16" | "float16").
Status save_hf_model(LlamaForCausalLM& model, const std::string& dir, const std::string& dtype);

// Loads <dir>/config.json and the weights of <dir>.
Result<LlamaForCausalLM> load_hf_model(const std::string& dir);

}  // namespace slipway::model
