// Micro-batches from the token cache: (B, block_size) int64 tensors for the sampler's blocks, and the
// validation set in order.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "data/token_cache.h"

namespace slipway::train {

// ids: (B, T) int64 for blocks `indices[begin, begin + count)` of `split`, on `device`.
torch::Tensor make_batch(const data::TokenCache& cache, data::Split split,
                         const std::vector<uint64_t>& indices, size_t begin, size_t count,
                         torch::Device device = torch::kCPU);

}  // namespace slipway::train
