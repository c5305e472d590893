// FlatAdamW: AdamW (torch.optim.AdamW's formula, decoupled weight decay) over parameters that live in one
// contiguous buffer per group, with their gradients in one buffer too. A step, the gradient norm, clipping
// and zeroing are a handful of large ops instead of ~10 small ops per parameter, which is what a small
// model's step time is made of; the flat gradient is also what one allreduce needs. On CPU in fp32 the
// step is one fused pass over the buffers (clipping folded in) instead of eight.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "contract/run_config.h"

namespace slipway::train {

class FlatAdamW {
public:
    // Moves each parameter's data into its group's buffer (the parameter becomes a view of it) and gives
    // it a gradient that is a view of the group's gradient buffer. `decays[i]`: weight decay applies.
    FlatAdamW(const std::vector<std::string>& names, const std::vector<torch::Tensor>& params,
              const std::vector<bool>& decays, const TrainingConfig& training);

    // Global L2 norm of all gradients; scales them down to `max_norm` when above (max_norm <= 0: no clip).
    // The fused CPU step applies that scale as it reads each gradient instead of in a pass of its own, so
    // until step() or zero_grad() the stored gradients are the unclipped ones.
    // With sharded parameters each rank holds a part of the gradient: `sum_over_ranks` adds the squared
    // norms of all ranks.
    double clip_grad_norm(double max_norm, const std::function<double(double)>& sum_over_ranks = nullptr);
    void step(double lr);
    void zero_grad();

    int64_t steps() const { return steps_; }
    void set_steps(int64_t steps) { steps_ = steps; }
    // The moments of one parameter (views into the flat state; writable for a resume).
    torch::Tensor exp_avg(const std::string& name) const;
    torch::Tensor exp_avg_sq(const std::string& name) const;

private:
    struct Group {
        double weight_decay = 0;
        torch::Tensor params, grads, exp_avg, exp_avg_sq;  // (n) each
    };
    struct Slot {
        size_t group;
        int64_t offset;
        std::vector<int64_t> shape;
    };
    torch::Tensor view(const torch::Tensor& flat, const Slot& slot) const;

    std::vector<Group> groups_;
    std::map<std::string, Slot> slots_;
    double beta1_, beta2_, eps_;
    int64_t steps_ = 0;
    bool fused_ = false;     // every buffer is CPU fp32: the step is one loop
    double grad_scale_ = 1;  // clipping not yet applied to the stored gradients (fused CPU step only)
};

}  // namespace slipway::train
