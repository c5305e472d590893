// The decoder's memory-bound glue as CUDA kernels (fused_kernels.cu): RMSNorm (optionally with the residual
// add before it), SwiGLU over the packed gate|up product, and RoPE applied in place to the packed q|k|v
// product, forward and backward, each one pass over its rows with fp32 math. They round where the ATen
// formulas of fused_ops.cpp round (the reference they are tested against) and nowhere else.
// No torch and no CUDA headers here: fused_ops.cpp passes raw device pointers and the current ATen stream.
#pragma once

#include <cstdint>

#include "contract/status.h"
#include "model/cuda_element_type.h"

namespace slipway::model::cuda {

// RMSNorm over rows of `cols` contiguous elements: y = w * round_x(h * rstd), rstd = rsqrt(mean(h^2) + eps),
// with h = x, or with a residual add h = round_x(x + delta) (written to `sum`). y's type is the promotion of
// x's and w's.
struct RmsNormForward {
    const void* x = nullptr;  // (rows, cols)
    ElementType x_type = ElementType::kFloat32;
    const void* delta = nullptr;  // (rows, cols) or null
    ElementType delta_type = ElementType::kFloat32;
    void* sum = nullptr;           // (rows, cols) in x_type, written when delta is given
    const void* weight = nullptr;  // (cols)
    ElementType weight_type = ElementType::kFloat32;
    void* y = nullptr;  // (rows, cols)
    ElementType y_type = ElementType::kFloat32;
    float* rstd = nullptr;  // (rows)
    int64_t rows = 0, cols = 0;
    float eps = 1e-6f;
};
[[nodiscard]] Status rms_norm_forward(const RmsNormForward& a, void* stream);

// Its gradient: dh = round_x(rstd (wg - x_hat mean(wg x_hat))) with wg = round_y(g w), x_hat = h rstd in
// fp32, plus grad_sum (the gradient that reaches h directly, for the residual form). With weight_partials,
// also the weight's gradient as fp32 partial sums over `chunks` slices of the rows (chunks, cols): the
// caller sums them.
struct RmsNormBackward {
    const void* grad_y = nullptr;  // (rows, cols) in y_type
    ElementType y_type = ElementType::kFloat32;
    const void* grad_sum = nullptr;  // (rows, cols) in x_type, or null
    const void* x = nullptr;         // h: (rows, cols)
    ElementType x_type = ElementType::kFloat32;
    const void* weight = nullptr;  // (cols)
    ElementType weight_type = ElementType::kFloat32;
    const float* rstd = nullptr;       // (rows)
    void* grad_x = nullptr;            // (rows, cols) in x_type
    float* weight_partials = nullptr;  // (chunks, cols) or null
    int64_t chunks = 0;
    int64_t rows = 0, cols = 0;
};
[[nodiscard]] Status rms_norm_backward(const RmsNormBackward& a, void* stream);
// How many row slices rms_norm_backward's weight partials use for `rows` rows.
int64_t rms_norm_weight_chunks(int64_t rows);

// SwiGLU over a packed (rows, 2I) gate|up buffer: out (rows, I) = round(round(silu(gate)) * up), all in
// `type`. Backward writes (rows, 2I): d_gate | d_up from grad (rows, I), with silu recomputed.
[[nodiscard]] Status swiglu_forward(const void* gate_up, void* out, ElementType type, int64_t rows,
                                    int64_t inter, void* stream);
[[nodiscard]] Status swiglu_backward(const void* grad, const void* gate_up, void* grad_gate_up,
                                     ElementType type, int64_t rows, int64_t inter, void* stream);

// Rotary embedding on a (tokens, heads, D) buffer whose tokens are `token_stride` elements apart and whose
// heads are contiguous D-vectors: the first `rotated_heads` heads become x cos + rotate_half(x) sin (forward,
// in place) in fp32 with one rounding; token i reads row i % T of the (T, D) tables. Backward writes
// grad_x = g cos + rotate_half^T(g sin) for those heads and copies the others (contiguous, token_stride).
struct RopeArgs {
    int64_t tokens = 0, t = 0, heads = 0, rotated_heads = 0, head_dim = 0, token_stride = 0;
    ElementType type = ElementType::kFloat32;  // of the buffer
    const void* cos = nullptr;                 // (T, D)
    const void* sin = nullptr;
    ElementType table_type = ElementType::kFloat32;
};
[[nodiscard]] Status rope_forward_in_place(const RopeArgs& a, void* x, void* stream);
[[nodiscard]] Status rope_backward(const RopeArgs& a, const void* grad, void* grad_x, void* stream);

}  // namespace slipway::model::cuda
