// What the editor learns from a model folder's config.json: the LLaMA-family shape and the names of its
// linear modules (the LoRA target checklist). Memory and time are the planner's (editor/run_plan.h).
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
};

// Reads <model_dir>/config.json. The error names the file.
Result<ModelShape> read_model_shape(const std::string& model_dir);

// The per-layer linear modules LoRA can target in this family, in HF order.
std::vector<std::string> linear_module_names(const ModelShape& shape);

}  // namespace slipway::app
