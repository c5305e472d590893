// LrSchedule (schedule.h): the lambdas of transformers.optimization, step by step.
#include "train/schedule.h"

#include <algorithm>
#include <cmath>

namespace slipway::train {

Result<LrSchedule> LrSchedule::create(const std::string& kind, double base_lr, int64_t warmup_steps,
                                      int64_t total_steps) {
    LrSchedule s;
    if (kind == "linear") {
        s.kind_ = Kind::kLinear;
    } else if (kind == "cosine") {
        s.kind_ = Kind::kCosine;
    } else if (kind == "constant") {
        s.kind_ = Kind::kConstant;
    } else if (kind == "constant_with_warmup") {
        s.kind_ = Kind::kConstantWithWarmup;
    } else {
        return Status::Error("lr_scheduler_type \"" + kind + "\" is not supported");
    }
    s.base_lr_ = base_lr;
    s.warmup_ = std::max<int64_t>(0, warmup_steps);
    s.total_ = std::max<int64_t>(1, total_steps);
    return s;
}

double LrSchedule::multiplier(int64_t step) const {
    const auto d = [](int64_t v) { return static_cast<double>(v); };
    const bool warming = kind_ != Kind::kConstant && step < warmup_;
    if (warming) return d(step) / d(std::max<int64_t>(1, warmup_));
    switch (kind_) {
        case Kind::kLinear:
            return std::max(0.0, d(total_ - step) / d(std::max<int64_t>(1, total_ - warmup_)));
        case Kind::kCosine: {
            const double progress = d(step - warmup_) / d(std::max<int64_t>(1, total_ - warmup_));
            const double pi = 3.14159265358979323846;
            return std::max(0.0, 0.5 * (1.0 + std::cos(pi * 0.5 * 2.0 * progress)));
        }
        case Kind::kConstant:
        case Kind::kConstantWithWarmup:
            return 1.0;
    }
    return 1.0;
}

double LrSchedule::lr(int64_t step) const {
    return base_lr_ * multiplier(step);
}

int64_t total_training_steps(const TrainingConfig& training, int64_t micro_batches_per_epoch) {
    if (training.max_steps) return *training.max_steps;
    const int64_t per_epoch =
        std::max<int64_t>(1, micro_batches_per_epoch / training.gradient_accumulation_steps);
    return static_cast<int64_t>(std::ceil(training.num_train_epochs * static_cast<double>(per_epoch)));
}

int64_t warmup_steps_for(const TrainingConfig& training, int64_t total_steps) {
    if (training.warmup_steps > 0) return training.warmup_steps;
    return static_cast<int64_t>(std::ceil(static_cast<double>(total_steps) * training.warmup_ratio));
}

}  // namespace slipway::train
