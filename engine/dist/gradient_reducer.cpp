// GradientReducer (gradient_reducer.h): c10d::Reducer set up the way torch.nn.parallel.DDP does it.
#include "dist/gradient_reducer.h"

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/reducer.hpp>

namespace slipway::dist {

GradientReducer::GradientReducer(const std::vector<std::string>& names,
                                 const std::vector<torch::Tensor>& params,
                                 const c10::intrusive_ptr<c10d::ProcessGroup>& group, double bucket_mb) {
    c10d::verify_params_across_processes(group, params, c10::nullopt);
    const auto cap = static_cast<size_t>(bucket_mb * 1024 * 1024);
    // Python DDP: a small first bucket (1 MiB) so the first allreduce starts early, then bucket_mb.
    auto [buckets, limits] = c10d::compute_bucket_assignment_by_size(
        params, {static_cast<size_t>(c10d::kDefaultFirstBucketBytes), cap},
        std::vector<bool>(params.size(), false));
    std::reverse(buckets.begin(), buckets.end());  // gradients arrive last layer first
    std::reverse(limits.begin(), limits.end());
    bucket_count_ = buckets.size();
    std::unordered_map<size_t, std::string> param_names;
    for (size_t i = 0; i < names.size(); ++i)
        param_names[i] = names[i];
    // gradient_as_bucket_view stays off: the optimizer's gradients are views of its flat buffer.
    reducer_ = std::make_unique<c10d::Reducer>(params, std::move(buckets), std::move(limits), group,
                                               std::vector<bool>(params.size(), false),
                                               static_cast<int64_t>(cap), /*find_unused_parameters=*/false,
                                               /*gradient_as_bucket_view=*/false, std::move(param_names),
                                               static_cast<int64_t>(c10d::kDefaultFirstBucketBytes));
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::before_sync_forward() {
    reducer_->prepare_for_forward();
    reducer_->rebuild_buckets();  // a no-op except once, after the first synchronized step
}

void GradientReducer::before_sync_backward(const torch::Tensor& loss) {
    reducer_->prepare_for_backward({loss});
}

void GradientReducer::abandon() {
    (void)reducer_.release();
}

}  // namespace slipway::dist
