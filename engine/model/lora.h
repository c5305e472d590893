// LoRA on LlamaForCausalLM as PEFT does it: target modules by name (or "all-linear"), per-module rank and
// alpha patterns, rsLoRA scaling, modules_to_save trained in full; adapters saved and loaded in PEFT's
// format (adapter_config.json + adapter_model.safetensors with base_model.model.* keys), and merged.
#pragma once

#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "io/safetensors.h"
#include "model/llama.h"
#include "model/lora_targets.h"

namespace slipway::model {

inline constexpr const char* kPeftKeyPrefix = "base_model.model.";

// Adds adapters to every linear layer the config targets; returns the adapted module names. Every
// target must match at least one layer (a typo would otherwise train nothing).
Result<std::vector<std::string>> apply_lora(LlamaForCausalLM& model, const AdapterConfig& adapter);

// Writes <dir>/adapter_config.json and <dir>/adapter_model.safetensors (LoRA weights and the
// modules_to_save weights, fp32) as PEFT's save_pretrained does.
Status save_adapter(LlamaForCausalLM& model, const AdapterConfig& adapter, const std::string& base_model_path,
                    const std::string& dir);

// Reads a PEFT LoRA adapter folder, adds its adapters to `model` and loads their weights.
Result<AdapterConfig> load_adapter(LlamaForCausalLM& model, const std::string& dir);

// Folds every adapter into its base weight (W += scaling x B A).
void merge_lora(LlamaForCausalLM& model);

// QLoRA's base: every linear layer of the decoder blocks (not lm_head, which bitsandbytes' transformers
// integration keeps in full precision) stored as NF4 with the config's double quantization and compute
// dtype. Their weights stop being parameters. Returns the bytes of the 4-bit storage.
Result<int64_t> quantize_base(LlamaForCausalLM& model, const AdapterConfig& adapter);
// quantize_base for a model whose weights are still to be loaded from an HF checkpoint: each decoder linear
// weight is quantized from the checkpoint's mapped bytes (never held in full precision as a parameter), then
// the other weights are loaded as load_weights does. Returns the bytes of the 4-bit storage.
Result<int64_t> load_quantized_base(LlamaForCausalLM& model, const io::Checkpoint& checkpoint,
                                    const AdapterConfig& adapter);
// Module::to moves parameters and buffers; the NF4 storage is neither: this moves it (after model->to).
void move_quantized_base(LlamaForCausalLM& model, const torch::Device& device);

}  // namespace slipway::model
