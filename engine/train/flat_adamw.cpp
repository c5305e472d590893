// FlatAdamW (flat_adamw.h). The update is torch.optim.AdamW's, op for op: p *= 1 - lr wd; m = b1 m +
// (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
#include "train/flat_adamw.h"

#include <cmath>

#include <torch/torch.h>

namespace slipway::train {

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
        const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(
            params.empty() ? torch::Device(torch::kCPU) : params[0].device());
        group.params = torch::empty({sizes[g]}, options);
        group.grads = torch::zeros({sizes[g]}, options);
        group.exp_avg = torch::zeros({sizes[g]}, options);
        group.exp_avg_sq = torch::zeros({sizes[g]}, options);
        groups_.push_back(std::move(group));
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

double FlatAdamW::clip_grad_norm(double max_norm) {
    torch::NoGradGuard no_grad;
    double squares = 0;
    for (const Group& g : groups_) {
        if (g.grads.numel() > 0) squares += g.grads.dot(g.grads).item<double>();
    }
    const double norm = std::sqrt(squares);
    if (max_norm > 0 && std::isfinite(norm)) {
        const double coefficient = max_norm / (norm + 1e-6);  // as torch.nn.utils.clip_grad_norm_
        if (coefficient < 1) {
            for (Group& g : groups_)
                g.grads.mul_(coefficient);
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
        if (g.weight_decay != 0) g.params.mul_(1 - lr * g.weight_decay);
        g.exp_avg.mul_(beta1_).add_(g.grads, 1 - beta1_);
        g.exp_avg_sq.mul_(beta2_).addcmul_(g.grads, g.grads, 1 - beta2_);
        const torch::Tensor denom = (g.exp_avg_sq.sqrt() / std::sqrt(bias2)).add_(eps_);
        g.params.addcdiv_(g.exp_avg, denom, -lr / bias1);
    }
}

void FlatAdamW::zero_grad() {
    for (Group& g : groups_)
        g.grads.zero_();
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
