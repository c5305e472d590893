// Learning-rate schedules with the formulas of HF transformers' get_scheduler (linear, cosine,
// constant, constant_with_warmup), and the step arithmetic of a run (no torch).
#pragma once

#include <cstdint>
#include <string>

#include "contract/run_config.h"
#include "contract/status.h"

namespace slipway::train {

class LrSchedule {
public:
    // `kind` as /training/lr_scheduler_type; warmup in optimizer steps.
    static Result<LrSchedule> create(const std::string& kind, double base_lr, int64_t warmup_steps,
                                     int64_t total_steps);

    // Learning rate used by the optimizer step with 0-based index `step` (HF's LambdaLR after `step`
    // scheduler.step() calls).
    double lr(int64_t step) const;
    double multiplier(int64_t step) const;
    int64_t warmup_steps() const { return warmup_; }
    int64_t total_steps() const { return total_; }

private:
    enum class Kind { kLinear, kCosine, kConstant, kConstantWithWarmup };
    Kind kind_ = Kind::kLinear;
    double base_lr_ = 0;
    int64_t warmup_ = 0;
    int64_t total_ = 0;
};

// Optimizer steps of a run: max_steps, or ceil(epochs x steps per epoch) where an epoch has
// max(1, floor(micro-batches per rank / accumulation)) steps, as HF's Trainer counts them.
int64_t total_training_steps(const TrainingConfig& training, int64_t micro_batches_per_epoch);

// warmup_steps, or ceil(total x warmup_ratio) when only the ratio is set (HF get_warmup_steps).
int64_t warmup_steps_for(const TrainingConfig& training, int64_t total_steps);

}  // namespace slipway::train
