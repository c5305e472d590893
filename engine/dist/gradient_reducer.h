// GradientReducer: gradient averaging across ranks by DDP's own C++ core, c10d::Reducer. Trainable
// parameters only, in buckets of ~bucket_mb (reverse order, as Python DDP builds them; rebuilt after the
// first step in the order gradients became ready), each bucket's allreduce starting as soon as its last
// gradient is computed, so communication overlaps the rest of backward.
//
// Per optimizer step: micro-steps that only accumulate call nothing; the micro-step whose backward must
// synchronize calls before_sync_forward() before its forward and before_sync_backward() before backward.
// When backward returns, every gradient holds the mean over ranks.
//
// The layout (which parameters share a bucket, in which order) decides the order in which each gradient's
// ranks are added up (a ring allreduce starts each chunk of a bucket at another rank), so a run resumed on
// 3 or more ranks continues bit for bit only if it reduces with the layout the interrupted run had. The
// checkpoint keeps it (layout()), and the resumed run starts with it (the constructor's `layout`).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
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
    // Buckets of parameter indices (into `params`), each in reduction order.
    using Layout = std::vector<std::vector<size_t>>;

    // Checks that every rank has the same parameter shapes (naming the rank that differs). Without a
    // `layout`, the first step reduces in DDP's first layout (reverse parameter order); with one (a resumed
    // run's, from layout() of the run it continues), in that.
    GradientReducer(const std::vector<std::string>& names, const std::vector<torch::Tensor>& params,
                    const c10::intrusive_ptr<c10d::ProcessGroup>& group, double bucket_mb,
                    const Layout& layout = {});
    ~GradientReducer();
    GradientReducer(const GradientReducer&) = delete;
    GradientReducer& operator=(const GradientReducer&) = delete;

    void before_sync_forward();
    void before_sync_backward(const torch::Tensor& loss);
    size_t bucket_count() const { return bucket_count_; }
    // The layout the next step reduces with: after the first synchronized step, the one rebuilt in the order
    // gradients became ready (rebuilt here if the next forward has not done it yet). A collective: every
    // rank calls it at the same point between steps.
    Layout layout();
    // A reducer whose allreduce failed must not be destroyed (it waits on the dead work): leak it.
    void abandon();

private:
    std::unique_ptr<c10d::Reducer> reducer_;
    size_t bucket_count_ = 0;
    std::unordered_map<const void*, size_t> index_of_;  // a parameter's TensorImpl -> its index
};

}  // namespace slipway::dist
