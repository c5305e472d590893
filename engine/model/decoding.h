// Token-level decoding through a model's KV cache: the prompt in one forward, then one token per forward.
// The one decoding loop of the engine: `generate` (text, sampling, stop strings) and `eval`'s greedy tasks
// both run on it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/llama.h"

namespace slipway::model {

// Picks the next token from the (V) fp32 logits of the last position (on the CPU).
using NextToken = std::function<int64_t(const float* logits, int64_t vocab)>;
// Sees each new token; false stops decoding after it.
using AcceptToken = std::function<bool(int64_t id)>;

// At most `max_new_tokens` new tokens, and never past max_position_embeddings; returns them (the one that
// stopped decoding included). `prompt` must be non-empty and shorter than max_position_embeddings. Runs
// without autograd on the model's device; the caller sets eval mode. `hook`: a sharded model's gathers
// (llama.h UnitHook).
std::vector<int64_t> decode_tokens(LlamaForCausalLM& model, const std::vector<int64_t>& prompt,
                                   int64_t max_new_tokens, const NextToken& next, const AcceptToken& accept,
                                   const UnitHook& hook = {});

}  // namespace slipway::model
