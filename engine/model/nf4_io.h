// bitsandbytes' serialization of 4-bit models, as transformers saves and loads "-bnb-4bit" folders:
// config.json's quantization_config, and per quantized linear layer the tensors <name>.weight (packed uint8,
// (n/2, 1)), .absmax, .quant_map, .nested_absmax, .nested_quant_map and .quant_state.bitsandbytes__nf4 (the
// QuantState JSON as uint8 bytes).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"
#include "io/safetensors.h"
#include "model/nf4_weight.h"

namespace slipway::model {

struct Bnb4bitConfig {
    bool double_quant = true;
    std::string compute_dtype = "bfloat16";
};

// config.json's quantization_config: nullopt without one; an error naming the key for what the engine
// cannot run (8-bit, fp4, other quant_method values).
[[nodiscard]] Result<std::optional<Bnb4bitConfig>> read_bnb_4bit_config(const nlohmann::json& config_json);
nlohmann::json bnb_4bit_config_json(const Bnb4bitConfig& config);

// The key suffixes after "<module>.weight" that a quantized weight adds (for "used key" bookkeeping).
const std::vector<std::string>& nf4_key_suffixes();

// Adds the tensors of `w` under `weight_name` ("model.layers.0.self_attn.q_proj.weight").
void add_nf4_tensors(std::map<std::string, torch::Tensor>& out, const std::string& weight_name,
                     const Nf4Weight& w);
// Whether the checkpoint holds `weight_name` in 4-bit form (its quant_state is there).
bool has_nf4_tensors(const io::Checkpoint& checkpoint, const std::string& weight_name);
// Reads them back; errors name the key. The shape comes from the quant_state and must be `expected`.
[[nodiscard]] Result<Nf4Weight> read_nf4_tensors(const io::Checkpoint& checkpoint,
                                                 const std::string& weight_name,
                                                 const std::vector<int64_t>& expected);

}  // namespace slipway::model
