// The frozen base of a LoRA (or embeddings-only) run, laid out for speed once at load: its floating-point
// weights in one dtype (bf16 on GPUs: half the memory, and no fp32 -> bf16 cast of every weight on every
// forward, which autocast does not cache for frozen weights), and each decoder layer's q|k|v and gate|up
// weights packed into one buffer, so their joint products read them as one view with no copy.
#pragma once

#include <string>

#include <torch/types.h>

namespace slipway::model {

class LlamaForCausalLMImpl;

struct FrozenBaseLayout {
    int64_t converted_bytes = 0;  // bytes of frozen weights after conversion
    int64_t packed_groups = 0;    // q|k|v and gate|up groups now one buffer each
};

// Parameters that do not require grad, of a floating dtype, move to `dtype` (kFloat32 or kBFloat16); the
// trainable ones (adapters, modules_to_save) are left as they are. NF4-quantized layers keep their form.
// Call after requires_grad is set and the model is on its device. Values are rounded to `dtype`, so with
// kFloat32 (from fp32) nothing changes but the packing.
FrozenBaseLayout lay_out_frozen_base(LlamaForCausalLMImpl& model, torch::ScalarType dtype);

// The dtype /model/base_dtype asks for: "float32", "bfloat16", or "auto" = bfloat16 for LoRA on a GPU
// with bf16 training, float32 otherwise.
torch::ScalarType frozen_base_dtype(const std::string& base_dtype, const std::string& adapter_method,
                                    bool bf16, const torch::Device& device);

}  // namespace slipway::model
