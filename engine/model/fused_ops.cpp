// fused_ops.h: forward under no-grad (no graph of intermediates), backward by the closed-form gradients;
// the ATen formulas first (the reference and the fallback), then the same functions on the CUDA kernels.
#include "model/fused_ops.h"

#include "model/cuda_kernels_built.h"

#include <cstdlib>
#include <cstring>
#include <tuple>
#include <vector>

#include <torch/torch.h>

#ifdef SLIPWAY_WITH_CUDA_KERNELS
#include <c10/core/DeviceGuard.h>

#include "model/cuda_launch.h"
#include "model/fused_kernels_cuda.h"
#endif

namespace slipway::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// (-x2, x1) for the two halves of the last dimension, and its transpose (x2, -x1).
torch::Tensor rotate_half(const torch::Tensor& x, bool transpose) {
    const std::vector<torch::Tensor> halves = x.chunk(2, -1);
    return transpose ? torch::cat({halves[1], -halves[0]}, -1) : torch::cat({-halves[1], halves[0]}, -1);
}

class RmsNorm : public torch::autograd::Function<RmsNorm> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                                 double eps) {
        torch::NoGradGuard no_grad;
        const torch::Tensor x32 = x.to(torch::kFloat32);
        const torch::Tensor rstd =
            torch::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);  // (..., 1) fp32
        ctx->save_for_backward({x, weight, rstd});
        return weight * (x32 * rstd).to(x.scalar_type());
    }

    // With x_hat = x32 rstd (rounded to x's dtype in forward, as HF): dy/dw = x_hat, and
    // dx = rstd (w g - x_hat mean(w g x_hat)) in fp32.
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor &x = saved[0], &weight = saved[1], &rstd = saved[2];
        const torch::Tensor g = grads[0];
        const torch::Tensor x_hat32 = x.to(torch::kFloat32) * rstd;  // (..., C)
        torch::Tensor dweight;
        if (weight.requires_grad()) {
            const torch::Tensor x_hat = x_hat32.to(x.scalar_type());
            dweight = (g * x_hat)
                          .reshape({-1, g.size(-1)})
                          .sum(0, /*keepdim=*/false, torch::kFloat32)
                          .to(weight.scalar_type());  // (C)
        }
        const torch::Tensor wg = (g * weight).to(torch::kFloat32);  // (..., C)
        const torch::Tensor mean = (wg * x_hat32).mean(-1, /*keepdim=*/true);
        const torch::Tensor dx = ((wg - x_hat32 * mean) * rstd).to(x.scalar_type());
        return {dx, dweight, torch::Tensor()};
    }
};

class SwiGlu : public torch::autograd::Function<SwiGlu> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& gate, const torch::Tensor& up) {
        torch::NoGradGuard no_grad;
        ctx->save_for_backward({gate, up});
        return torch::silu(gate) * up;
    }

    // silu(g) = g s, s = sigmoid(g): d/dg = s (1 + g (1 - s)).
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor &gate = saved[0], &up = saved[1];
        // In fp32, rounded once at the end, as ATen's silu_backward computes.
        const torch::Tensor g = grads[0].to(torch::kFloat32), a = gate.to(torch::kFloat32);
        const torch::Tensor s = torch::sigmoid(a);
        const torch::Tensor d_up = (g * (a * s)).to(up.scalar_type());
        const torch::Tensor d_gate =
            (g * up.to(torch::kFloat32) * s * (1 + a * (1 - s))).to(gate.scalar_type());
        return {d_gate, d_up};
    }
};

class Rope : public torch::autograd::Function<Rope> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& cos,
                                 const torch::Tensor& sin) {
        torch::NoGradGuard no_grad;
        ctx->save_for_backward({cos, sin});
        ctx->saved_data["dtype"] = static_cast<int64_t>(x.scalar_type());
        const torch::Tensor c = cos.unsqueeze(-2), s = sin.unsqueeze(-2);  // ([B,] T, 1, D)
        return x * c + rotate_half(x, false) * s;
    }

    // y = x c + R x s with R the rotation above: dx = g c + R^T (g s).
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor c = saved[0].unsqueeze(-2), s = saved[1].unsqueeze(-2);
        const auto dtype = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
        const torch::Tensor g = grads[0];
        return {(g * c + rotate_half(g * s, true)).to(dtype), torch::Tensor(), torch::Tensor()};
    }
};

#ifdef SLIPWAY_WITH_CUDA_KERNELS
void check(const Status& launched) {
    TORCH_CHECK(launched.ok(), launched.message());
}

cuda::ElementType element(const torch::Tensor& t) {
    return cuda_element_type(t.scalar_type()).value();
}

bool has_element_types(std::initializer_list<torch::ScalarType> dtypes) {
    for (const torch::ScalarType d : dtypes)
        if (!cuda_element_type(d)) return false;
    return true;
}

int64_t rows_of(const torch::Tensor& x) {
    return x.size(-1) == 0 ? 0 : x.numel() / x.size(-1);
}

struct NormForward {
    torch::Tensor y, rstd, sum;  // sum (h) only with a residual
};

// x (..., C), delta like x or undefined, weight (C).
NormForward norm_forward(const torch::Tensor& x, const torch::Tensor& delta, const torch::Tensor& weight,
                         double eps) {
    const c10::DeviceGuard on(x.device());
    const torch::Tensor xc = x.contiguous(), wc = weight.contiguous();
    const torch::Tensor dc = delta.defined() ? delta.contiguous() : torch::Tensor();
    NormForward out;
    out.y = torch::empty(x.sizes(),
                         x.options().dtype(torch::promote_types(x.scalar_type(), weight.scalar_type())));
    out.rstd = torch::empty({rows_of(x)}, x.options().dtype(torch::kFloat32));  // (rows)
    cuda::RmsNormForward a;
    a.x = xc.data_ptr();
    a.x_type = element(xc);
    if (dc.defined()) {
        out.sum = torch::empty(x.sizes(), x.options());
        a.delta = dc.data_ptr();
        a.delta_type = element(dc);
        a.sum = out.sum.data_ptr();
    }
    a.weight = wc.data_ptr();
    a.weight_type = element(wc);
    a.y = out.y.data_ptr();
    a.y_type = element(out.y);
    a.rstd = out.rstd.data_ptr<float>();
    a.rows = rows_of(x);
    a.cols = x.size(-1);
    a.eps = static_cast<float>(eps);
    check(cuda::rms_norm_forward(a, current_cuda_stream(x.device())));
    return out;
}

// {dh, dweight}: g_y (..., C) in y's dtype; g_h, the gradient that reaches h directly, or undefined.
std::pair<torch::Tensor, torch::Tensor> norm_backward(const torch::Tensor& g_y, const torch::Tensor& g_h,
                                                      const torch::Tensor& h, const torch::Tensor& weight,
                                                      const torch::Tensor& rstd, torch::ScalarType y_dtype) {
    const c10::DeviceGuard on(h.device());
    const torch::Tensor gy = g_y.to(y_dtype).contiguous(), wc = weight.contiguous(), hc = h.contiguous();
    const torch::Tensor gh = g_h.defined() ? g_h.to(h.scalar_type()).contiguous() : torch::Tensor();
    torch::Tensor dh = torch::empty(h.sizes(), h.options());
    cuda::RmsNormBackward a;
    a.grad_y = gy.data_ptr();
    a.y_type = element(gy);
    a.grad_sum = gh.defined() ? gh.data_ptr() : nullptr;
    a.x = hc.data_ptr();
    a.x_type = element(hc);
    a.weight = wc.data_ptr();
    a.weight_type = element(wc);
    a.rstd = rstd.data_ptr<float>();
    a.grad_x = dh.data_ptr();
    a.rows = rows_of(h);
    a.cols = h.size(-1);
    torch::Tensor partials;
    if (weight.requires_grad()) {
        a.chunks = cuda::rms_norm_weight_chunks(a.rows);
        partials = torch::empty({a.chunks, a.cols}, h.options().dtype(torch::kFloat32));  // (chunks, C)
        a.weight_partials = partials.data_ptr<float>();
    }
    check(cuda::rms_norm_backward(a, current_cuda_stream(h.device())));
    return {dh, partials.defined() ? partials.sum(0).to(weight.scalar_type()) : torch::Tensor()};
}

class CudaRmsNorm : public torch::autograd::Function<CudaRmsNorm> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                                 double eps) {
        NormForward f = norm_forward(x, torch::Tensor(), weight, eps);
        ctx->save_for_backward({x, weight, f.rstd});
        return f.y;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor &x = saved[0], &weight = saved[1], &rstd = saved[2];
        const torch::ScalarType y_dtype = torch::promote_types(x.scalar_type(), weight.scalar_type());
        auto [dx, dweight] = norm_backward(grads[0], torch::Tensor(), x, weight, rstd, y_dtype);
        return {dx, dweight, torch::Tensor()};
    }
};

// Outputs {h, y}: h feeds the next residual add, y the block.
class CudaAddRmsNorm : public torch::autograd::Function<CudaAddRmsNorm> {
public:
    static variable_list forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& delta,
                                 const torch::Tensor& weight, double eps) {
        NormForward f = norm_forward(x, delta, weight, eps);
        ctx->save_for_backward({f.sum, weight, f.rstd});
        ctx->saved_data["delta_dtype"] = static_cast<int64_t>(delta.scalar_type());
        return {f.sum, f.y};
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor &h = saved[0], &weight = saved[1], &rstd = saved[2];
        const auto delta_dtype = static_cast<torch::ScalarType>(ctx->saved_data["delta_dtype"].toInt());
        const torch::Tensor &g_h = grads[0], &g_y = grads[1];
        torch::Tensor dh, dweight;
        if (g_y.defined()) {
            std::tie(dh, dweight) = norm_backward(
                g_y, g_h, h, weight, rstd, torch::promote_types(h.scalar_type(), weight.scalar_type()));
        } else {
            dh = g_h;
        }
        return {dh, dh.defined() ? dh.to(delta_dtype) : dh, dweight, torch::Tensor()};
    }
};

// gate_up (..., 2I) -> (..., I).
class CudaSwiglu : public torch::autograd::Function<CudaSwiglu> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& gate_up) {
        const c10::DeviceGuard on(gate_up.device());
        const torch::Tensor gu = gate_up.contiguous();
        const int64_t inter = gu.size(-1) / 2;
        std::vector<int64_t> shape = gu.sizes().vec();
        shape.back() = inter;
        torch::Tensor out = torch::empty(shape, gu.options());
        check(cuda::swiglu_forward(gu.data_ptr(), out.data_ptr(), element(gu), rows_of(gu), inter,
                                   current_cuda_stream(gu.device())));
        ctx->save_for_backward({gu});
        return out;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const torch::Tensor gu = ctx->get_saved_variables()[0];
        const c10::DeviceGuard on(gu.device());
        const torch::Tensor g = grads[0].to(gu.scalar_type()).contiguous();
        torch::Tensor d_gu = torch::empty(gu.sizes(), gu.options());  // (..., 2I)
        check(cuda::swiglu_backward(g.data_ptr(), gu.data_ptr(), d_gu.data_ptr(), element(gu), rows_of(gu),
                                    gu.size(-1) / 2, current_cuda_stream(gu.device())));
        return {d_gu};
    }
};

cuda::RopeArgs rope_args(const torch::Tensor& x, int64_t rotated_heads, const torch::Tensor& cos,
                         const torch::Tensor& sin) {
    cuda::RopeArgs a;
    a.tokens = x.size(0) * x.size(1);
    a.t = cos.dim() == 3 ? x.size(0) * x.size(1) : x.size(1);  // per-token tables: row = token
    a.heads = x.size(2);
    a.rotated_heads = rotated_heads;
    a.head_dim = x.size(3);
    a.token_stride = x.size(2) * x.size(3);
    a.type = element(x);
    a.cos = cos.data_ptr();
    a.sin = sin.data_ptr();
    a.table_type = element(cos);
    return a;
}

// x (B, T, H D) rotated in place (marked dirty for autograd); backward rotates the gradient back. The heads
// are a view made here, out of autograd's sight: x itself is what the caller hands in, so where x is no
// view autograd has no CopySlices to run around the in-place op (three copies of the gradient).
class CudaRopeInPlace : public torch::autograd::Function<CudaRopeInPlace> {
public:
    static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, const torch::Tensor& cos,
                                 const torch::Tensor& sin, int64_t head_dim, int64_t rotated_heads) {
        const c10::DeviceGuard on(x.device());
        const torch::Tensor heads = x.view({x.size(0), x.size(1), -1, head_dim});  // (B, T, H, D)
        check(cuda::rope_forward_in_place(rope_args(heads, rotated_heads, cos, sin), x.data_ptr(),
                                          current_cuda_stream(x.device())));
        ctx->mark_dirty({x});
        ctx->save_for_backward({cos, sin});
        ctx->saved_data["head_dim"] = head_dim;
        ctx->saved_data["rotated_heads"] = rotated_heads;
        return x;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor g = grads[0].contiguous();  // (B, T, H D)
        const c10::DeviceGuard on(g.device());
        const torch::Tensor heads = g.view({g.size(0), g.size(1), -1, ctx->saved_data["head_dim"].toInt()});
        torch::Tensor dx = torch::empty(g.sizes(), g.options());  // (B, T, H D)
        check(cuda::rope_backward(
            rope_args(heads, ctx->saved_data["rotated_heads"].toInt(), saved[0], saved[1]), g.data_ptr(),
            dx.data_ptr(), current_cuda_stream(g.device())));
        return {dx, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
};
#endif

bool norm_on_kernels(const torch::Tensor& x, const torch::Tensor& weight) {
#ifdef SLIPWAY_WITH_CUDA_KERNELS
    return cuda_kernels_enabled(x.device()) && weight.device() == x.device() &&
           has_element_types({x.scalar_type(), weight.scalar_type(),
                              torch::promote_types(x.scalar_type(), weight.scalar_type())});
#else
    (void)x, (void)weight;
    return false;
#endif
}

}  // namespace

bool cuda_kernels_built() {
#ifdef SLIPWAY_WITH_CUDA_KERNELS
    return true;
#else
    return false;
#endif
}

bool cuda_kernels_enabled(const torch::Device& device) {
#ifdef SLIPWAY_WITH_CUDA_KERNELS
    static const bool enabled = [] {
        const char* v = std::getenv("SLIPWAY_CUDA_KERNELS");
        return v == nullptr || std::strcmp(v, "0") != 0;
    }();
    return enabled && device.is_cuda();
#else
    (void)device;
    return false;
#endif
}

torch::Tensor fused_rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
#ifdef SLIPWAY_WITH_CUDA_KERNELS
    if (norm_on_kernels(x, weight)) return CudaRmsNorm::apply(x, weight, eps);
#endif
    return RmsNorm::apply(x, weight, eps);
}

std::pair<torch::Tensor, torch::Tensor> fused_add_rms_norm(const torch::Tensor& x, const torch::Tensor& delta,
                                                           const torch::Tensor& weight, double eps) {
#ifdef SLIPWAY_WITH_CUDA_KERNELS
    if (norm_on_kernels(x, weight) && delta.device() == x.device() && delta.sizes() == x.sizes() &&
        cuda_element_type(delta.scalar_type()) &&
        torch::promote_types(x.scalar_type(), delta.scalar_type()) == x.scalar_type()) {
        const variable_list out = CudaAddRmsNorm::apply(x, delta, weight, eps);
        return {out[0], out[1]};
    }
#endif
    torch::Tensor h = x + delta;
    return {h, fused_rms_norm(h, weight, eps)};
}

torch::Tensor fused_swiglu_packed(const torch::Tensor& gate_up) {
#ifdef SLIPWAY_WITH_CUDA_KERNELS
    if (cuda_kernels_enabled(gate_up.device()) && cuda_element_type(gate_up.scalar_type()))
        return CudaSwiglu::apply(gate_up);
#endif
    const std::vector<torch::Tensor> gu = gate_up.split(gate_up.size(-1) / 2, -1);  // backward: one cat
    return SwiGlu::apply(gu[0], gu[1]);
}

torch::Tensor fused_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
    return Rope::apply(x, cos, sin);
}

bool rope_in_place_fits(const torch::Tensor& x, int64_t head_dim, const torch::Tensor& cos,
                        const torch::Tensor& sin) {
#ifdef SLIPWAY_WITH_CUDA_KERNELS
    return cuda_kernels_enabled(x.device()) && x.dim() == 3 && x.is_contiguous() && head_dim > 0 &&
           head_dim % 2 == 0 && x.size(2) % head_dim == 0 && cuda_element_type(x.scalar_type()) &&
           cuda_element_type(cos.scalar_type()) && cos.scalar_type() == sin.scalar_type() &&
           cos.device() == x.device() && sin.device() == x.device() && cos.is_contiguous() &&
           sin.is_contiguous() && cos.sizes() == sin.sizes() && cos.size(-1) == head_dim &&
           (cos.dim() == 2 ? cos.size(0) == x.size(1)
                           : cos.dim() == 3 && cos.size(0) == x.size(0) && cos.size(1) == x.size(1));
#else
    (void)x, (void)head_dim, (void)cos, (void)sin;
    return false;
#endif
}

torch::Tensor rope_in_place(const torch::Tensor& x, int64_t head_dim, int64_t rotated_heads,
                            const torch::Tensor& cos, const torch::Tensor& sin) {
    TORCH_CHECK(rope_in_place_fits(x, head_dim, cos, sin), "rope_in_place: no kernel for these tensors");
#ifdef SLIPWAY_WITH_CUDA_KERNELS
    return CudaRopeInPlace::apply(x, cos, sin, head_dim, rotated_heads);
#else
    (void)rotated_heads;
    return x;
#endif
}

}  // namespace slipway::model
