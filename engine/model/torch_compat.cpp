// torch_compat.h: on 1.13 on CPU, at::_scaled_dot_product_attention is not fused and returns the weights
// anyway, so a plain attention with a pre-scaled q and an additive causal mask is as fast; torch 2.x has
// fused kernels behind at::scaled_dot_product_attention(is_causal=true).
#include "model/torch_compat.h"

#include <cmath>

#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

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

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& mask) {
#if TORCH_VERSION_MAJOR >= 2
    (void)mask;
    return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/true);
#else
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
    const torch::Tensor scores = torch::matmul(q * scale, k.transpose(-2, -1)) + mask;  // (B, H, T, T)
    // Softmax in fp32, then back to v's dtype, as HF's eager attention does under bf16.
    return torch::matmul(torch::softmax(scores, -1, torch::kFloat32).to(v.scalar_type()), v);
#endif
}

namespace {

bool cpu_autocast_enabled() {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    return at::autocast::is_autocast_enabled(at::kCPU);
#else
    return at::autocast::is_cpu_enabled();
#endif
}

void set_cpu_autocast(bool enabled) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCPU, enabled);
#else
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(enabled);
#endif
}

}  // namespace

Bf16Autocast::Bf16Autocast(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
    previous_ = cpu_autocast_enabled();
    set_cpu_autocast(true);
    at::autocast::increment_nesting();
}

Bf16Autocast::~Bf16Autocast() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();  // drop the bf16 weight copies
    set_cpu_autocast(previous_);
}

NoAutocast::NoAutocast() : previous_(cpu_autocast_enabled()) {
    set_cpu_autocast(false);
}

NoAutocast::~NoAutocast() {
    set_cpu_autocast(previous_);
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
