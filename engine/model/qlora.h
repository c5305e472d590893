// QLoRA's base model: the decoder's linear weights as NF4 (nf4_weight.h), quantized in memory, quantized
// from a checkpoint as it loads, or read pre-quantized from a bitsandbytes "-bnb-4bit" folder (nf4_io.h);
// and such folders written (the quantize command).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include <torch/types.h>

#include "contract/run_config.h"
#include "contract/status.h"
#include "io/safetensors.h"
#include "model/llama.h"

namespace slipway::model {

// QLoRA's base: every linear layer of the decoder blocks (not lm_head, which bitsandbytes' transformers
// integration keeps in full precision) stored as NF4 with the config's double quantization and compute
// dtype. Their weights stop being parameters. Returns the bytes of the 4-bit storage.
[[nodiscard]] Result<int64_t> quantize_base(LlamaForCausalLM& model, const AdapterConfig& adapter);
// The linear layers of decoder layer `layer` (what quantize_base and load_quantized_base do to every layer):
// from `checkpoint`'s mapped bytes, or its 4-bit tensors taken as they are, when one is given (the names used
// are added to `used`), else from the weights the layers hold. The NF4 storage is placed on `device`.
// Sharded runs (train/sharded_model.h) quantize one layer at a time this way, just before taking their
// slices of it. Returns the bytes of the layer's 4-bit storage.
[[nodiscard]] Result<int64_t> quantize_layer(LlamaForCausalLM& model, const AdapterConfig& adapter,
                                             int64_t layer, const io::Checkpoint* checkpoint,
                                             const torch::Device& device,
                                             std::set<std::string>* used = nullptr);
// quantize_base for a model whose weights are still to be loaded from an HF checkpoint: each decoder linear
// weight is quantized from the checkpoint's mapped bytes (never held in full precision as a parameter), then
// the other weights are loaded as load_weights does. A weight the checkpoint already holds in bitsandbytes'
// 4-bit form is taken as it is. Returns the bytes of the 4-bit storage.
[[nodiscard]] Result<int64_t> load_quantized_base(LlamaForCausalLM& model, const io::Checkpoint& checkpoint,
                                                  const AdapterConfig& adapter);
// Module::to moves parameters and buffers; the NF4 storage is neither: this moves it (after model->to).
void move_quantized_base(LlamaForCausalLM& model, const torch::Device& device);

// The AdapterConfig fields of a pre-quantized folder's quantization_config (method qlora).
AdapterConfig qlora_settings(bool double_quant, const std::string& compute_dtype);

// Writes `dir` as a bitsandbytes 4-bit HF folder: config.json with quantization_config, model.safetensors
// with the 4-bit tensors of the quantized layers and every other weight in `dtype`.
[[nodiscard]] Status save_quantized_model(LlamaForCausalLM& model, const AdapterConfig& adapter,
                                          const std::string& dir, const std::string& dtype);

}  // namespace slipway::model
