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

// Autocast state per device type (CPU and CUDA); the API moved between 1.13 and 2.4.
bool autocast_enabled(at::DeviceType device) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    return at::autocast::is_autocast_enabled(device);
#else
    return device == at::kCPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

void set_autocast(at::DeviceType device, bool enabled) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_dtype(device, at::kBFloat16);
    at::autocast::set_autocast_enabled(device, enabled);
#else
    if (device == at::kCPU) {
        at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
        at::autocast::set_cpu_enabled(enabled);
    } else {
        at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
        at::autocast::set_enabled(enabled);
    }
#endif
}

}  // namespace

Bf16Autocast::Bf16Autocast(bool enabled, torch::DeviceType device) : enabled_(enabled), device_(device) {
    if (!enabled_) return;
    previous_ = autocast_enabled(device_);
    set_autocast(device_, true);
    at::autocast::increment_nesting();
}

Bf16Autocast::~Bf16Autocast() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();  // drop the bf16 weight copies
    set_autocast(device_, previous_);
}

NoAutocast::NoAutocast() : previous_cpu_(autocast_enabled(at::kCPU)), previous_cuda_(autocast_enabled(at::kCUDA)) {
    set_autocast(at::kCPU, false);
    set_autocast(at::kCUDA, false);
}

NoAutocast::~NoAutocast() {
    set_autocast(at::kCPU, previous_cpu_);
    set_autocast(at::kCUDA, previous_cuda_);
}

torch::Device training_device(bool use_gpus, int64_t local_rank) {
    if (use_gpus && torch::cuda::is_available())
        return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank % torch::cuda::device_count()));
    return torch::Device(torch::kCPU);
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
