// fused_ops.h: forward under no-grad (no graph of intermediates), backward by the closed-form gradients.
#include "model/fused_ops.h"

#include <torch/torch.h>

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
        const torch::Tensor c = cos.unsqueeze(1), s = sin.unsqueeze(1);  // (T, 1, D)
        return x * c + rotate_half(x, false) * s;
    }

    // y = x c + R x s with R the rotation above: dx = g c + R^T (g s).
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor c = saved[0].unsqueeze(1), s = saved[1].unsqueeze(1);
        const auto dtype = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
        const torch::Tensor g = grads[0];
        return {(g * c + rotate_half(g * s, true)).to(dtype), torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

torch::Tensor fused_rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
    return RmsNorm::apply(x, weight, eps);
}

torch::Tensor fused_swiglu(const torch::Tensor& gate, const torch::Tensor& up) {
    return SwiGlu::apply(gate, up);
}

torch::Tensor fused_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
    return Rope::apply(x, cos, sin);
}

}  // namespace slipway::model
