// The final outputs of a run in training.output_dir: the model as an HF folder (config.json,
// model.safetensors) or, for LoRA, a PEFT adapter folder; tokenizer.json copied; and run.json (the exact
// resolved config, engine version, world size).
#pragma once

#include <string>

#include "contract/run_config.h"
#include "contract/status.h"
#include "model/llama.h"

namespace slipway::train {

Status save_outputs(model::LlamaForCausalLM& model, const RunConfig& config,
                    const std::string& engine_version, int64_t world_size);

}  // namespace slipway::train
