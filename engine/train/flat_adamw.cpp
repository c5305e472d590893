// FlatAdamW (flat_adamw.h). The update is torch.optim.AdamW's, op for op: p *= 1 - lr wd; m = b1 m +
// (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
// On CPU in fp32 those ops run as one loop over the four buffers (the same float operations in the same
// order, each element read and written once); elsewhere (CUDA, other dtypes) as ATen ops.
#include "train/flat_adamw.h"

#include <cmath>

#include <torch/torch.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace slipway::train {
namespace {

struct AdamWScalars {
    float decay;       // 1 - lr wd
    float grad_scale;  // clipping coefficient (1: none)
    float beta1, one_minus_beta1, beta2, one_minus_beta2;
    float sqrt_bias2;  // sqrt(1 - b2^t)
    float eps;
    float step;  // -lr / (1 - b1^t)
};

// Elements [begin, end) of one group. SSE2 (every x86-64) does four lanes with the same IEEE operations as
// the scalar tail, so results do not depend on alignment or on how the range is split across threads.
void adamw_range(float* p, const float* g, float* m, float* v, int64_t begin, int64_t end,
                 const AdamWScalars& s, bool decay) {
    int64_t i = begin;
#if defined(__SSE2__)
    const __m128 decay4 = _mm_set1_ps(s.decay), scale4 = _mm_set1_ps(s.grad_scale);
    const __m128 b1 = _mm_set1_ps(s.beta1), omb1 = _mm_set1_ps(s.one_minus_beta1);
    const __m128 b2 = _mm_set1_ps(s.beta2), omb2 = _mm_set1_ps(s.one_minus_beta2);
    const __m128 sb2 = _mm_set1_ps(s.sqrt_bias2), eps4 = _mm_set1_ps(s.eps), step4 = _mm_set1_ps(s.step);
    const bool scaled = s.grad_scale != 1.0f;
    for (; i + 4 <= end; i += 4) {
        __m128 pi = _mm_loadu_ps(p + i);
        __m128 gi = _mm_loadu_ps(g + i);
        if (scaled) gi = _mm_mul_ps(gi, scale4);
        if (decay) pi = _mm_mul_ps(pi, decay4);
        const __m128 mi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(m + i), b1), _mm_mul_ps(gi, omb1));
        const __m128 vi =
            _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(v + i), b2), _mm_mul_ps(_mm_mul_ps(omb2, gi), gi));
        const __m128 denom = _mm_add_ps(_mm_div_ps(_mm_sqrt_ps(vi), sb2), eps4);
        pi = _mm_add_ps(pi, _mm_div_ps(_mm_mul_ps(step4, mi), denom));
        _mm_storeu_ps(m + i, mi);
        _mm_storeu_ps(v + i, vi);
        _mm_storeu_ps(p + i, pi);
    }
#endif
    for (; i < end; ++i) {
        float gi = g[i];
        if (s.grad_scale != 1.0f) gi *= s.grad_scale;
        float pi = decay ? p[i] * s.decay : p[i];
        const float mi = m[i] * s.beta1 + gi * s.one_minus_beta1;
        const float vi = v[i] * s.beta2 + (s.one_minus_beta2 * gi) * gi;
        const float denom = std::sqrt(vi) / s.sqrt_bias2 + s.eps;
        pi = pi + (s.step * mi) / denom;
        m[i] = mi;
        v[i] = vi;
        p[i] = pi;
    }
}

// The sum of squares in fp64, a million elements at a time. An fp32 dot over hundreds of millions of
// elements loses digits (1.4e-5 of the norm on a 0.6M-parameter model), and how many depends on how the
// gradient is split: sharded ranks each summed their part and disagreed with one rank by that much.
double sum_of_squares(const torch::Tensor& flat) {  // flat: (n)
    constexpr int64_t kChunk = int64_t{1} << 20;
    if (flat.numel() == 0) return 0;
    torch::Tensor total = torch::zeros({}, flat.options().dtype(torch::kFloat64));
    for (int64_t start = 0; start < flat.numel(); start += kChunk) {
        const torch::Tensor part =
            flat.narrow(0, start, std::min(kChunk, flat.numel() - start)).to(torch::kFloat64);
        total += part.dot(part);
    }
    return total.item<double>();  // one device sync
}

bool fusable(const torch::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == torch::kFloat32 && t.is_contiguous();
}

}  // namespace

FlatAdamW::FlatAdamW(const std::vector<std::string>& names, const std::vector<torch::Tensor>& params,
                     const std::vector<bool>& decays, const TrainingConfig& t)
    : beta1_(t.adam_beta1), beta2_(t.adam_beta2), eps_(t.adam_epsilon) {
    // Group 0 decays, group 1 does not (norms, biases).
    int64_t sizes[2] = {0, 0};
    for (size_t i = 0; i < params.size(); ++i)
        sizes[decays[i] ? 0 : 1] += params[i].numel();
    for (int g = 0; g < 2; ++g) {
        Group group;
        group.weight_decay = g == 0 ? t.weight_decay : 0.0;
        const auto options = torch::TensorOptions()
                                 .dtype(torch::kFloat32)
                                 .device(params.empty() ? torch::Device(torch::kCPU) : params[0].device());
        group.params = torch::empty({sizes[g]}, options);
        group.grads = torch::zeros({sizes[g]}, options);
        group.exp_avg = torch::zeros({sizes[g]}, options);
        group.exp_avg_sq = torch::zeros({sizes[g]}, options);
        groups_.push_back(std::move(group));
    }
    fused_ = true;
    for (const Group& g : groups_) {
        fused_ =
            fused_ && fusable(g.params) && fusable(g.grads) && fusable(g.exp_avg) && fusable(g.exp_avg_sq);
    }
    int64_t offsets[2] = {0, 0};
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
        const size_t g = decays[i] ? 0 : 1;
        Slot slot{g, offsets[g], params[i].sizes().vec()};
        offsets[g] += params[i].numel();
        torch::Tensor param = params[i];
        view(groups_[g].params, slot).copy_(param);
        param.set_data(view(groups_[g].params, slot));        // the parameter now aliases the flat buffer
        param.mutable_grad() = view(groups_[g].grads, slot);  // autograd accumulates into it in place
        slots_.emplace(names[i], std::move(slot));
    }
}

torch::Tensor FlatAdamW::view(const torch::Tensor& flat, const Slot& slot) const {
    int64_t n = 1;
    for (int64_t d : slot.shape)
        n *= d;
    return flat.slice(0, slot.offset, slot.offset + n).view(slot.shape);
}

double FlatAdamW::clip_grad_norm(double max_norm, const std::function<double(double)>& sum_over_ranks) {
    torch::NoGradGuard no_grad;
    double squares = 0;
    for (const Group& g : groups_)
        squares += sum_of_squares(g.grads);
    if (sum_over_ranks) squares = sum_over_ranks(squares);
    const double norm = std::sqrt(squares);
    if (max_norm > 0 && std::isfinite(norm)) {
        const double coefficient = max_norm / (norm + 1e-6);  // as torch.nn.utils.clip_grad_norm_
        if (coefficient < 1) {
            if (fused_) {
                grad_scale_ = coefficient;  // applied by the fused step as it reads the gradients
            } else {
                for (Group& g : groups_)
                    g.grads.mul_(coefficient);
            }
        }
    }
    return norm;
}

void FlatAdamW::step(double lr) {
    torch::NoGradGuard no_grad;
    ++steps_;
    const double bias1 = 1 - std::pow(beta1_, static_cast<double>(steps_));
    const double bias2 = 1 - std::pow(beta2_, static_cast<double>(steps_));
    for (Group& g : groups_) {
        if (g.params.numel() == 0) continue;
        if (fused_) {
            // torch's scalar arguments become floats in its fp32 kernels; so they do here.
            const AdamWScalars s{static_cast<float>(1 - lr * g.weight_decay),
                                 static_cast<float>(grad_scale_),
                                 static_cast<float>(beta1_),
                                 static_cast<float>(1 - beta1_),
                                 static_cast<float>(beta2_),
                                 static_cast<float>(1 - beta2_),
                                 static_cast<float>(std::sqrt(bias2)),
                                 static_cast<float>(eps_),
                                 static_cast<float>(-lr / bias1)};
            float* p = g.params.data_ptr<float>();
            const float* grad = g.grads.data_ptr<float>();
            float* m = g.exp_avg.data_ptr<float>();
            float* v = g.exp_avg_sq.data_ptr<float>();
            const bool decay = g.weight_decay != 0;
            at::parallel_for(0, g.params.numel(), 1 << 16, [&](int64_t begin, int64_t end) {
                adamw_range(p, grad, m, v, begin, end, s, decay);
            });
            continue;
        }
        if (g.weight_decay != 0) g.params.mul_(1 - lr * g.weight_decay);  // ATen ops: CUDA, other dtypes
        g.exp_avg.mul_(beta1_).add_(g.grads, 1 - beta1_);
        g.exp_avg_sq.mul_(beta2_).addcmul_(g.grads, g.grads, 1 - beta2_);
        const torch::Tensor denom = (g.exp_avg_sq.sqrt() / std::sqrt(bias2)).add_(eps_);
        g.params.addcdiv_(g.exp_avg, denom, -lr / bias1);
    }
    grad_scale_ = 1;
}

void FlatAdamW::zero_grad() {
    for (Group& g : groups_)
        g.grads.zero_();
    grad_scale_ = 1;
}

torch::Tensor FlatAdamW::exp_avg(const std::string& name) const {
    const Slot& s = slots_.at(name);
    return view(groups_[s.group].exp_avg, s);
}

torch::Tensor FlatAdamW::exp_avg_sq(const std::string& name) const {
    const Slot& s = slots_.at(name);
    return view(groups_[s.group].exp_avg_sq, s);
}

}  // namespace slipway::train
