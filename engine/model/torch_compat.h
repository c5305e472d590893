// The one place for LibTorch calls whose name or signature differs between Debian's 1.13 and the NGC
// image's 2.x: scaled-dot-product attention and thread settings.
#pragma once

#include <torch/types.h>

namespace slipway::model {

// Causal self-attention. q: (B, H, T, D), k and v: (B, H, T, D) (GQA already expanded). Returns (B, H, T, D).
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

// Intra-op threads of this process (LibTorch starts at 1 here).
void set_torch_threads(int threads);

}  // namespace slipway::model
