// What the editor learns from a model folder's config.json: the LLaMA-family shape, the names of its
// linear modules (the LoRA target checklist), and a per-GPU memory estimate for a run config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"

namespace slipway::app {

struct ModelShape {
    std::string model_type;  // "llama", "mistral", "qwen2", ...
    int64_t vocab_size = 0;
    int64_t hidden_size = 0;
    int64_t intermediate_size = 0;
    int64_t num_layers = 0;
    int64_t num_heads = 0;
    int64_t num_kv_heads = 0;
    bool tied_embeddings = false;

    int64_t parameters() const;
    int64_t linear_parameters(const std::string& module) const;  // one layer's q_proj, ..., down_proj
};

// Reads <model_dir>/config.json. The error names the file.
Result<ModelShape> read_model_shape(const std::string& model_dir);

// The per-layer linear modules LoRA can target in this family, in HF order.
std::vector<std::string> linear_module_names(const ModelShape& shape);

struct MemoryEstimate {
    int64_t parameters = 0;
    int64_t trainable_parameters = 0;
    double weights_gib = 0;      // the base weights in model.dtype
    double optimizer_gib = 0;    // trainable fp32 master + gradients + AdamW moments
    double activations_gib = 0;  // one micro-batch (with gradient checkpointing: layer inputs + one layer)
    double total_gib = 0;
};

// A rough per-device figure (no sharding: every rank holds the whole model, as DDP does), meant to say
// "fits" or "does not fit", not to replace a measurement.
MemoryEstimate estimate_memory(const RunConfig& config, const ModelShape& shape);

}  // namespace slipway::app
