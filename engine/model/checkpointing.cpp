// checkpointed_layer (checkpointing.h): a custom autograd function whose forward runs the layer under
// NoGradGuard and whose backward runs it again with gradients on, then back-propagates through that
// recomputation (re-entrant, as torch.utils.checkpoint(use_reentrant=True)), under the autocast state its
// forward had. Layer parameters receive their gradients from the inner backward; the function returns the
// gradient of x.
#include "model/checkpointing.h"

#include <torch/torch.h>

#include "model/torch_compat.h"

namespace slipway::model {
namespace {

struct LayerConstants {
    torch::Tensor cos, sin, mask;  // (T, D), (T, D), (T, T) or undefined
};

class CheckpointedLayer : public torch::autograd::Function<CheckpointedLayer> {
public:
    // The RoPE tables and mask reach forward by pointer, not as tensor inputs: they never need gradients,
    // and torch 2.x refuses an undefined tensor input (its mask is undefined: attention is causal by itself).
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 DecoderLayerImpl* layer, const LayerConstants* constants) {
        ctx->save_for_backward({x});
        ctx->saved_data["layer"] = reinterpret_cast<int64_t>(layer);
        ctx->saved_data["cos"] = constants->cos;
        ctx->saved_data["sin"] = constants->sin;
        ctx->saved_data["mask"] = constants->mask;
        ctx->saved_data["autocast"] = bf16_autocast_active(x.device().type());
        torch::NoGradGuard no_grad;
        return layer->forward(x, constants->cos, constants->sin, constants->mask);
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        auto* layer = reinterpret_cast<DecoderLayerImpl*>(ctx->saved_data["layer"].toInt());
        const torch::Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_(true);
        torch::Tensor y;
        {
            torch::AutoGradMode enable(true);
            // As the forward ran: backward runs outside the training loop's autocast scope.
            Bf16Autocast autocast(ctx->saved_data["autocast"].toBool(), x.device().type());
            y = layer->forward(x, ctx->saved_data["cos"].toTensor(), ctx->saved_data["sin"].toTensor(),
                               ctx->saved_data["mask"].toTensor());
        }
        torch::autograd::backward({y}, {grads[0]});  // accumulates into the layer's parameters and x
        return {x.grad(), torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

torch::Tensor checkpointed_layer(DecoderLayerImpl* layer, const torch::Tensor& x, const torch::Tensor& cos,
                                 const torch::Tensor& sin, const torch::Tensor& mask) {
    // With frozen embeddings (LoRA, embeddings-only) x does not require grad, and a re-entrant checkpoint
    // would then cut the layer out of backward: HF's enable_input_require_grads, done here.
    const torch::Tensor input = x.requires_grad() ? x : x.detach().requires_grad_(true);
    const LayerConstants constants{cos, sin, mask};
    return CheckpointedLayer::apply(input, layer, &constants);
}

}  // namespace slipway::model
