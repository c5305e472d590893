// LlamaForCausalLM behind eval::ScoringModel: log-likelihoods from one forward pass, and greedy generation
// through the KV cache (model/decoding.h, the loop `generate` runs on).
#pragma once

#include <memory>

#include <c10/core/Device.h>

#include "eval/runner.h"
#include "model/llama.h"

namespace slipway::eval {

// The model is used as given (the caller sets eval mode, autocast and no-grad as it wants; score and greedy
// take no gradients). It must outlive the scorer.
std::unique_ptr<ScoringModel> make_llama_scorer(model::LlamaForCausalLM& model, c10::Device device);

}  // namespace slipway::eval
