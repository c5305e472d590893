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

class ShardedModel;

// The same outputs from a sharded run. Every rank calls it (each unit is gathered in turn); only the rank
// with `writes` writes. Full and embeddings-only runs write an HF folder with one safetensors file per unit
// and model.safetensors.index.json, so the whole model is never gathered at once.
Status save_sharded_outputs(ShardedModel& sharded, const RunConfig& config, const std::string& engine_version,
                            bool writes);

}  // namespace slipway::train
