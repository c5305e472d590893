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

// The precision of the head's products in training. kAuto: bf16 GEMMs (fp32 accumulation, fp32
// log-softmax and loss, chunks sized by bytes, no host sync) on a GPU under bf16 autocast or with bf16
// hidden states, as HF's head runs there; fp32 GEMMs elsewhere (exact). The others force one (tests).
enum class HeadPrecision { kAuto, kFloat32, kBFloat16 };

// h: (N, C) hidden states, w: (V, C) output weight, targets: (N) int64.
ChunkedLoss chunked_cross_entropy(const torch::Tensor& h, const torch::Tensor& w,
                                  const torch::Tensor& targets, int64_t chunk_rows, bool count_correct = true,
                                  HeadPrecision precision = HeadPrecision::kAuto);

}  // namespace slipway::model
