// The decoder's memory-bound glue as custom autograd functions over ATen ops, for GPUs: each saves only
// what its backward needs (the input and one fp32 row statistic, or nothing) where autograd's op-by-op
// graph would keep every fp32 intermediate, and runs fewer, larger kernels. Same formulas as the op-by-op
// path (llama.cpp), which stays the CPU's and is these functions' reference in the tests.
#pragma once

#include <torch/types.h>

namespace slipway::model {

// HF's LlamaRMSNorm: weight * (x32 * rsqrt(mean(x32^2) + eps)).to(x.dtype), x32 = x in fp32.
// x: (..., C), weight: (C). Saves x, weight and the fp32 rsqrt per row.
torch::Tensor fused_rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// SwiGLU: silu(gate) * up, both (..., I). Saves gate and up; silu is recomputed in backward.
torch::Tensor fused_swiglu(const torch::Tensor& gate, const torch::Tensor& up);

// HF's rotary embedding x cos + rotate_half(x) sin. x: (B, T, H, D), cos and sin: (T, D) in x's dtype or
// fp32 (the result is then fp32, as the op-by-op path promotes). Linear in x: saves only cos and sin.
torch::Tensor fused_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

}  // namespace slipway::model
