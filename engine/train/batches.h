// Micro-batches from the token cache: (B, block_size) int64 tensors for the sampler's blocks, and the
// validation set in order; for a conversation cache also which next-token targets are trained.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "data/token_cache.h"

namespace slipway::train {

// ids: (B, T) int64 for blocks `indices[begin, begin + count)` of `split`, on `device`.
// (kUntrainedTokenBit cleared).
torch::Tensor make_batch(const data::TokenCache& cache, data::Split split,
                         const std::vector<uint64_t>& indices, size_t begin, size_t count,
                         torch::Device device = torch::kCPU);

// The trained next-token targets of the same blocks: (K) int64 positions in the B x (T-1) order of
// causal_lm_loss's targets (position b (T-1) + i predicts token i + 1 of block b) whose token is trained.
// Undefined for a text cache: every target is trained. Decided on the host, so the loss needs no sync.
torch::Tensor trained_targets(const data::TokenCache& cache, data::Split split,
                              const std::vector<uint64_t>& indices, size_t begin, size_t count,
                              torch::Device device = torch::kCPU);

}  // namespace slipway::train
