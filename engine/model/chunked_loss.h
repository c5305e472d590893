// Fused output projection + cross-entropy: logits are made chunk by chunk, and in training the gradients
// of each chunk are made right then, so the (N, V) fp32 logits never exist at once (the memory peak of a
// small-model step) and are never recomputed.
#pragma once

#include <torch/types.h>

namespace slipway::model {

struct ChunkedLoss {
    torch::Tensor loss;   // scalar mean cross-entropy over the N targets, differentiable w.r.t. h and w
    int64_t correct = 0;  // targets equal to the argmax of their logits
};

// h: (N, C) hidden states, w: (V, C) output weight, targets: (N) int64.
ChunkedLoss chunked_cross_entropy(const torch::Tensor& h, const torch::Tensor& w,
                                  const torch::Tensor& targets, int64_t chunk_rows,
                                  bool count_correct = true);

}  // namespace slipway::model
