// Evaluation on the validation blocks of the cache: token-weighted mean loss and next-token accuracy.
// With several ranks each evaluates its own strided share of the blocks; the sums are added across ranks
// before the means are taken, so the result equals a single process evaluating every block.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "data/token_cache.h"
#include "model/llama.h"
#include "train/batches.h"

namespace slipway::train {

struct EvalResult {
    double loss = 0;
    double token_accuracy = 0;
    int64_t tokens = 0;
    int64_t samples = 0;
};

// Sums over one rank's share: blocks rank, rank + world_size, ...
struct EvalSums {
    double loss_sum = 0;  // token-weighted
    double tokens = 0;
    double correct = 0;
    double samples = 0;

    std::vector<double> as_vector() const { return {loss_sum, tokens, correct, samples}; }
    static EvalSums from_vector(const std::vector<double>& v) { return {v[0], v[1], v[2], v[3]}; }
    EvalResult result() const;
};

// The loss of one batch (batches.h), with the argmax hits counted.
using BatchLoss = std::function<model::LossResult(const Batch& batch)>;

// With `every_rank_in_step` all ranks run the same number of batches (the short shares repeat a batch whose
// result is dropped), as sharded models need: each batch is a collective there.
EvalSums evaluate_share(const BatchLoss& loss, const data::TokenCache& cache, int64_t batch_size,
                        int64_t rank, int64_t world_size, torch::Device device, bool every_rank_in_step);

EvalSums evaluate_share(model::LlamaForCausalLM& model, const data::TokenCache& cache, int64_t batch_size,
                        int64_t rank = 0, int64_t world_size = 1, torch::Device device = torch::kCPU);

}  // namespace slipway::train
