// What the editor learns from a model folder's config.json: the family, the LLaMA-family shape the engine
// reads (model/llama_config.h: sizes, context, parameter count) and the names of its linear modules (the
// LoRA target checklist). Memory and time are the planner's (editor/run_plan.h).
#pragma once

#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "model/llama_config.h"

namespace slipway::app {

struct ModelShape {
    std::string model_type;     // "llama", "mistral", "qwen2", ...
    std::string architecture;   // architectures[0], e.g. "LlamaForCausalLM"; "" when not given
    model::LlamaConfig config;  // vocab, sizes, max_position_embeddings (context), parameter_count()
};

// Reads <model_dir>/config.json. The error names the file.
Result<ModelShape> read_model_shape(const std::string& model_dir);
// Reads a config.json by its own path (a local copy of a cluster model's).
Result<ModelShape> read_model_config(const std::string& config_json);

// The per-layer linear modules LoRA can target in this family, in HF order.
std::vector<std::string> linear_module_names(const ModelShape& shape);

}  // namespace slipway::app
