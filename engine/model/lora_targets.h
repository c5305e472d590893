// Which modules LoRA adapts and with what rank, by name, as PEFT decides it (target_modules, "all-linear",
// rank_pattern, alpha_pattern, modules_to_save). No torch: the model (lora.cpp) and the planner share it.
#pragma once

#include <cstdint>
#include <string>

#include "contract/run_config.h"

namespace slipway::model {

// PEFT's module-name match: the whole name, or its last dotted parts ("q_proj" matches
// "model.layers.0.self_attn.q_proj").
bool module_name_matches(const std::string& module, const std::string& key);

// Whether the linear module `module` gets an adapter ("all-linear": every linear layer but lm_head). Not
// for names inside an adapter (lora_A, lora_B).
bool lora_targets(const std::string& module, const AdapterConfig& adapter);

// The adapter's rank and alpha for `module`: rank_pattern / alpha_pattern (PEFT's get_pattern_key: a regex
// matched against the end of the name) or the defaults r / lora_alpha.
int64_t lora_rank_for(const std::string& module, const AdapterConfig& adapter);
double lora_alpha_for(const std::string& module, const AdapterConfig& adapter);

// Whether parameter `name` belongs to a module listed in modules_to_save.
bool in_modules_to_save(const std::string& name, const AdapterConfig& adapter);

}  // namespace slipway::model
