// Evaluation on the validation blocks of the cache: token-weighted mean loss and next-token accuracy.
#pragma once

#include <cstdint>

#include "data/token_cache.h"
#include "model/llama.h"

namespace slipway::train {

struct EvalResult {
    double loss = 0;
    double token_accuracy = 0;
    int64_t tokens = 0;
    int64_t samples = 0;
};

EvalResult evaluate(model::LlamaForCausalLM& model, const data::TokenCache& cache, int64_t batch_size);

}  // namespace slipway::train
