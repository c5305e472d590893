// Activation (gradient) checkpointing for one decoder layer: forward without keeping activations,
// recompute them in backward. Trades ~1/3 more compute for memory, as HF's gradient_checkpointing.
#pragma once

#include <torch/types.h>

#include "model/llama.h"

namespace slipway::model {

// layer(x, cos, sin, mask) whose intermediate activations are recomputed during backward. `layer` must
// outlive the backward pass (it belongs to the model). x: (B, T, C) -> (B, T, C).
torch::Tensor checkpointed_layer(DecoderLayerImpl* layer, const torch::Tensor& x, const torch::Tensor& cos,
                                 const torch::Tensor& sin, const torch::Tensor& mask);

}  // namespace slipway::model
