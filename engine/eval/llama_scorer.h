// LlamaForCausalLM behind eval::ScoringModel: log-likelihoods from one forward pass, and greedy generation
// through the KV cache (model/decoding.h, the loop `generate` runs on).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <c10/core/Device.h>

#include "eval/runner.h"
#include "model/llama.h"

namespace slipway::eval {

// Where a model is sharded over ranks (train/sharded_model.h): `hook` gathers each unit as the KV-cache
// forward reaches it, and `agree` turns this rank's greedy pick into the one every rank takes (rank 0's), so
// that all ranks decode the same tokens and gather the same units in the same order.
struct ShardedScoring {
    model::UnitHook hook;
    std::function<int64_t(int64_t id)> agree;
};

// The model is used as given (the caller sets eval mode, autocast and no-grad as it wants; score and greedy
// take no gradients). It must outlive the scorer. With `sharded`, every rank must make the same calls.
std::unique_ptr<ScoringModel> make_llama_scorer(model::LlamaForCausalLM& model, c10::Device device,
                                                ShardedScoring sharded = {});

}  // namespace slipway::eval
