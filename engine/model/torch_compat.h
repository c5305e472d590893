// The one place for LibTorch calls whose name or signature differs between Debian's 1.13 and the NGC
// image's 2.x: scaled-dot-product attention and thread settings.
#pragma once

#include <string>

#include <torch/types.h>

namespace slipway::model {

// Causal self-attention. q: (B, H, T, D), k and v: (B, H, T, D) (GQA already expanded). Returns (B, H, T, D).
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

// Intra-op threads of this process (LibTorch starts at 1 here).
void set_torch_threads(int threads);

// The key under which torch::optim keeps a parameter's state (an implementation detail of LibTorch).
std::string optimizer_state_key(const torch::Tensor& param);

// The CPU generator's state (uint8 bytes) and its restore: dropout and init draw from it.
torch::Tensor cpu_rng_state();
void set_cpu_rng_state(const torch::Tensor& state);

}  // namespace slipway::model
