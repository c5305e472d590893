// A frozen linear layer and its LoRA term as one autograd function: y = x W^T (+ b) + (x A^T) B^T with one
// output buffer (the adapter's product accumulated into the base's by addmm_) and, in backward, one dX
// buffer (dY W, then the adapter's dH A accumulated into it). Replaces the separate products, the scale,
// the add and the gradient sum that autograd would run over a full (tokens x features) tensor each.
#pragma once

#include <torch/types.h>

namespace slipway::model {

// Whether adapted_linear applies: the base weight (and bias) frozen; the caller has no dropout to draw.
bool adapted_linear_applies(const torch::Tensor& weight, const torch::Tensor& bias);

// x (..., C), weight (out, C) frozen, bias (out) frozen or undefined, a (r, C), b (out, r) with the scaling
// already in it. Products in the compute dtype: bf16 under bf16 autocast, else x's dtype (the weights are
// cast to it, as autocast would). Returns (..., out), a fresh tensor (not a view: in-place ops on it need no
// copy of their gradient). Gradients for x, a and b in their own dtypes.
torch::Tensor adapted_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                             const torch::Tensor& a, const torch::Tensor& b);

}  // namespace slipway::model
