// GradientReducer: gradient averaging across ranks by DDP's own C++ core, c10d::Reducer. Trainable
// parameters only, in buckets of ~bucket_mb (reverse order, as Python DDP builds them; rebuilt after the
// first step in the order gradients became ready), each bucket's allreduce starting as soon as its last
// gradient is computed, so communication overlaps the rest of backward.
//
// Per optimizer step: micro-steps that only accumulate call nothing; the micro-step whose backward must
// synchronize calls before_sync_forward() before its forward and before_sync_backward() before backward.
// When backward returns, every gradient holds the mean over ranks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <c10/util/intrusive_ptr.h>
#include <torch/types.h>

namespace c10d {
class ProcessGroup;
class Reducer;
}  // namespace c10d

namespace slipway::dist {

class GradientReducer {
public:
    // Checks that every rank has the same parameter shapes (naming the rank that differs).
    GradientReducer(const std::vector<std::string>& names, const std::vector<torch::Tensor>& params,
                    const c10::intrusive_ptr<c10d::ProcessGroup>& group, double bucket_mb);
    ~GradientReducer();
    GradientReducer(const GradientReducer&) = delete;
    GradientReducer& operator=(const GradientReducer&) = delete;

    void before_sync_forward();
    void before_sync_backward(const torch::Tensor& loss);
    size_t bucket_count() const { return bucket_count_; }
    // A reducer whose allreduce failed must not be destroyed (it waits on the dead work): leak it.
    void abandon();

private:
    std::unique_ptr<c10d::Reducer> reducer_;
    size_t bucket_count_ = 0;
};

}  // namespace slipway::dist
