// The decoder's memory-bound glue on GPUs as custom autograd functions: each saves only what its backward
// needs (the input and one fp32 row statistic, or nothing) where autograd's op-by-op graph would keep every
// fp32 intermediate. Where the engine was built with CUDA, the work is done by one kernel each way
// (fused_kernels_cuda.h); otherwise, or with SLIPWAY_CUDA_KERNELS=0, or for element types the kernels lack,
// by a few ATen ops. Same formulas as the op-by-op path (llama.cpp), which stays the CPU's and is these
// functions' reference in the tests.
#pragma once

#include <utility>

#include <torch/types.h>

namespace slipway::model {

// Whether the CUDA kernels run for tensors on `device`: built with CUDA, a CUDA device, and not turned off by
// SLIPWAY_CUDA_KERNELS=0 (read once; for measuring the kernels against the ATen path).
bool cuda_kernels_enabled(const torch::Device& device);

// HF's LlamaRMSNorm: weight * (x32 * rsqrt(mean(x32^2) + eps)).to(x.dtype), x32 = x in fp32.
// x: (..., C), weight: (C). Saves x, weight and the fp32 rsqrt per row.
torch::Tensor fused_rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// The residual add before an RMSNorm: h = x + delta (in x's dtype, which must be the promoted one) and
// fused_rms_norm(h). Returns {h, normed}. One pass each way on the kernels, else the two steps.
std::pair<torch::Tensor, torch::Tensor> fused_add_rms_norm(const torch::Tensor& x, const torch::Tensor& delta,
                                                           const torch::Tensor& weight, double eps);

// SwiGLU over the packed product of gate|up: silu(gate) * up, (..., 2I) -> (..., I). Saves gate|up; silu is
// recomputed in backward, whose gradient is one (..., 2I) buffer.
torch::Tensor fused_swiglu_packed(const torch::Tensor& gate_up);

// HF's rotary embedding x cos + rotate_half(x) sin. x: (B, T, H, D), cos and sin: (T, D) in x's dtype or
// fp32 (the result is then fp32, as the op-by-op path promotes). Linear in x: saves only cos and sin.
torch::Tensor fused_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

// The rotation in place on the packed q|k|v product: x (B, T, H D) contiguous, heads of head_dim, its first
// `rotated_heads` heads rotated (in x's dtype, from fp32 math: what SDPA would be handed after autocast), the
// rest left. Hand in the product itself, not a view of it: autograd copies the gradient of a view's base
// three times around an in-place op. Only where rope_in_place_fits; returns x.
bool rope_in_place_fits(const torch::Tensor& x, int64_t head_dim, const torch::Tensor& cos,
                        const torch::Tensor& sin);
torch::Tensor rope_in_place(const torch::Tensor& x, int64_t head_dim, int64_t rotated_heads,
                            const torch::Tensor& cos, const torch::Tensor& sin);

}  // namespace slipway::model
