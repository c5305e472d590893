// Micro-batches from the token cache: (B, T) int64 ids for the sampler's blocks, and the validation set in
// order; for a conversation cache also which next-token targets are trained and, packed, where each
// conversation starts. Everything is decided on the host, so the loss needs no sync.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "data/token_cache.h"
#include "model/llama.h"

namespace slipway::train {

struct Batch {
    // (B, T) int64, the cache's marks cleared. T is block_size for text; for conversations the batch ends
    // after its last trained token: what follows is padding or untrained and cannot change the loss
    // (attention is causal), so a batch of short conversations is cut to its longest.
    torch::Tensor ids;
    // (K) int64 positions in the B x (T-1) order of causal_lm_loss's targets (position b (T-1) + i predicts
    // token i + 1 of row b) whose token is trained. Undefined for a text cache: every target is trained.
    torch::Tensor trained;
    // Packed conversations: positions restarting at each and the documents (B, T). Undefined otherwise.
    model::DocumentLayout documents;
};

// The blocks `indices[begin, begin + count)` of `split`, on `device`.
Batch load_batch(const data::TokenCache& cache, data::Split split, const std::vector<uint64_t>& indices,
                 size_t begin, size_t count, torch::Device device = torch::kCPU);

// The same from blocks of marked token ids (the cache's layout: kUntrainedTokenBit, kDocumentStartBit),
// each of the same length: `conversations` reads the first mark, `packed` the second.
Batch batch_of_blocks(const std::vector<data::TokenSpan>& blocks, bool conversations, bool packed,
                      torch::Device device = torch::kCPU);

}  // namespace slipway::train
