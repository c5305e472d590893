// adapted_linear.h: forward without a graph of intermediates, backward by the closed-form gradients of
// y = x W^T + b + h B^T with h = x A^T:
//   dh = dY B,  dB = dY^T h,  dA = dh^T x,  dX = dY W + dh A.
#include "model/adapted_linear.h"

#include <optional>
#include <vector>

#include <torch/torch.h>

#include "model/torch_compat.h"

namespace slipway::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class AdaptedLinear : public torch::autograd::Function<AdaptedLinear> {
public:
    // The bias is no autograd input (it is frozen, and LibTorch 1.13 refuses an undefined tensor input).
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                                 const torch::Tensor& a, const torch::Tensor& b,
                                 const std::optional<torch::Tensor>& bias) {
        const torch::ScalarType dtype =
            bf16_autocast_active(x.device().type()) ? torch::kBFloat16 : x.scalar_type();
        const int64_t in = x.size(-1), out = weight.size(0);
        const torch::Tensor x2 = x.reshape({-1, in}).to(dtype);  // (N, C)
        const torch::Tensor w = weight.to(dtype), a_c = a.to(dtype), b_c = b.to(dtype);
        const torch::Tensor h = torch::mm(x2, a_c.t());  // (N, r)
        std::vector<int64_t> shape = x.sizes().vec();
        shape.back() = out;
        torch::Tensor y = torch::empty(shape, x2.options());  // (..., out)
        torch::Tensor y2 = y.view({-1, out});                 // (N, out), the same memory
        if (bias)
            torch::addmm_out(y2, bias->to(dtype), x2, w.t());  // the bias in the accumulator, as F.linear
        else
            torch::mm_out(y2, x2, w.t());
        y2.addmm_(h, b_c.t());  // + h B^T, accumulated with the product before the one rounding
        ctx->save_for_backward({x2, w, a_c, b_c, h});
        ctx->saved_data["x_dtype"] = x.scalar_type();
        ctx->saved_data["x_sizes"] = x.sizes().vec();
        ctx->saved_data["a_dtype"] = a.scalar_type();
        ctx->saved_data["b_dtype"] = b.scalar_type();
        return y;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor &x2 = saved[0], &w = saved[1], &a_c = saved[2], &b_c = saved[3], &h = saved[4];
        const torch::Tensor g = grads[0].reshape({-1, w.size(0)}).to(x2.scalar_type());  // (N, out)
        const torch::Tensor dh = torch::mm(g, b_c);                                      // (N, r)
        torch::Tensor dx, da, db;
        if (ctx->needs_input_grad(0)) {
            dx = torch::mm(g, w);  // (N, C)
            dx.addmm_(dh, a_c);    // one buffer: the adapter's share accumulated into the base's
            dx = dx.view(ctx->saved_data["x_sizes"].toIntVector())
                     .to(static_cast<torch::ScalarType>(ctx->saved_data["x_dtype"].toInt()));
        }
        if (ctx->needs_input_grad(2))  // the autograd inputs: x, weight, a, b
            da = torch::mm(dh.t(), x2).to(static_cast<torch::ScalarType>(ctx->saved_data["a_dtype"].toInt()));
        if (ctx->needs_input_grad(3))
            db = torch::mm(g.t(), h).to(static_cast<torch::ScalarType>(ctx->saved_data["b_dtype"].toInt()));
        return {dx, torch::Tensor(), da, db, torch::Tensor()};
    }
};

}  // namespace

bool adapted_linear_applies(const torch::Tensor& weight, const torch::Tensor& bias) {
    return weight.defined() && !weight.requires_grad() && (!bias.defined() || !bias.requires_grad());
}

torch::Tensor adapted_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                             const torch::Tensor& a, const torch::Tensor& b) {
    TORCH_CHECK(adapted_linear_applies(weight, bias), "adapted_linear: the base weight must be frozen");
    return AdaptedLinear::apply(x, weight, a, b,
                                bias.defined() ? std::optional<torch::Tensor>(bias) : std::nullopt);
}

}  // namespace slipway::model
