// torch_compat.h: on 1.13 on CPU, at::_scaled_dot_product_attention is not fused and returns the weights
// anyway, so a plain attention with a pre-scaled q and an additive causal mask is as fast; torch 2.x has
// fused kernels behind at::scaled_dot_product_attention(is_causal=true).
#include "model/torch_compat.h"

#include <cmath>

#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

namespace slipway::model {

torch::Tensor causal_mask(int64_t t, const torch::TensorOptions& options) {
#if TORCH_VERSION_MAJOR >= 2
    (void)t;
    (void)options;
    return {};
#else
    return torch::full({t, t}, -std::numeric_limits<float>::infinity(), options).triu(1);
#endif
}

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask) {
#if TORCH_VERSION_MAJOR >= 2
    (void)mask;
    return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/true);
#else
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
    const torch::Tensor scores = torch::matmul(q * scale, k.transpose(-2, -1)) + mask;  // (B, H, T, T)
    return torch::matmul(torch::softmax(scores, -1, scores.scalar_type()), v);
#endif
}

void set_torch_threads(int threads) {
    if (threads > 0) at::set_num_threads(threads);
}

torch::Tensor cpu_rng_state() {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get_state();
}

void set_cpu_rng_state(const torch::Tensor& state) {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
}

}  // namespace slipway::model
