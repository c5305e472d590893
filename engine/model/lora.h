// LoRA on LlamaForCausalLM as PEFT does it: target modules by name (or "all-linear"), per-module rank and
// alpha patterns, rsLoRA scaling, modules_to_save trained in full; adapters saved and loaded in PEFT's
// format (adapter_config.json + adapter_model.safetensors with base_model.model.* keys), and merged.
#pragma once

#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
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

}  // namespace slipway::model
