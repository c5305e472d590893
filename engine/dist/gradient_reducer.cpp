// GradientReducer (gradient_reducer.h): c10d::Reducer set up the way torch.nn.parallel.DDP does it.
#include "dist/gradient_reducer.h"

#include <algorithm>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/reducer.hpp>

namespace slipway::dist {

namespace {

// c10d::Reducer's constructor is the one torch call here whose signature moved between releases: up to
// torch ~2.9 it takes the per-bucket size limits after the bucket indices; from ~2.10 it drops them and
// takes (skip_all_reduce_unused_params, use_python_reducer, bucket_bytes_cap_list) after
// first_bucket_bytes_cap (an empty list keeps the two-cap rebuild, as before). Which one the headers have
// is detected, not guessed from the version number: the branch not taken is never instantiated.
template <typename Reducer = c10d::Reducer>
std::unique_ptr<Reducer> make_reducer(const std::vector<torch::Tensor>& params,
                                      std::vector<std::vector<size_t>> buckets, std::vector<size_t> limits,
                                      const c10::intrusive_ptr<c10d::ProcessGroup>& group, int64_t cap,
                                      std::unordered_map<size_t, std::string> param_names) {
    const std::vector<bool> dense(params.size(), false);
    const auto first_cap = static_cast<int64_t>(c10d::kDefaultFirstBucketBytes);
    constexpr bool takes_limits =
        std::is_constructible_v<Reducer, std::vector<at::Tensor>, std::vector<std::vector<size_t>>,
                                std::vector<size_t>, c10::intrusive_ptr<c10d::ProcessGroup>,
                                std::vector<bool>, int64_t, bool, bool,
                                std::unordered_map<size_t, std::string>, int64_t>;
    if constexpr (takes_limits) {
        return std::make_unique<Reducer>(params, std::move(buckets), std::move(limits), group, dense, cap,
                                         /*find_unused_parameters=*/false, /*gradient_as_bucket_view=*/false,
                                         std::move(param_names), first_cap);
    } else {
        (void)limits;  // the newer Reducer works its limits out again from the caps
        return std::make_unique<Reducer>(params, std::move(buckets), group, dense, cap,
                                         /*find_unused_parameters=*/false, /*gradient_as_bucket_view=*/false,
                                         std::move(param_names), first_cap,
                                         /*skip_all_reduce_unused_params=*/false,
                                         /*use_python_reducer=*/false,
                                         /*bucket_bytes_cap_list=*/std::vector<int64_t>{});
    }
}

}  // namespace

GradientReducer::GradientReducer(const std::vector<std::string>& names,
                                 const std::vector<torch::Tensor>& params,
                                 const c10::intrusive_ptr<c10d::ProcessGroup>& group, double bucket_mb,
                                 const Layout& layout) {
    c10d::verify_params_across_processes(group, params, c10::nullopt);
    const auto cap = static_cast<size_t>(bucket_mb * 1024 * 1024);
    const auto first_cap = static_cast<size_t>(c10d::kDefaultFirstBucketBytes);
    Layout buckets;
    std::vector<size_t> limits;
    if (layout.empty()) {
        // Python DDP: a small first bucket (1 MiB) so the first allreduce starts early, then bucket_mb.
        std::tie(buckets, limits) = c10d::compute_bucket_assignment_by_size(
            params, {first_cap, cap}, std::vector<bool>(params.size(), false));
        std::reverse(buckets.begin(), buckets.end());  // gradients arrive last layer first
        std::reverse(limits.begin(), limits.end());
    } else {
        std::vector<int> seen(params.size(), 0);
        for (const std::vector<size_t>& bucket : layout)
            for (size_t index : bucket)
                TORCH_CHECK(index < params.size() && seen[index]++ == 0, "gradient bucket layout: parameter ",
                            index, " is out of range or in two buckets");
        TORCH_CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<std::ptrdiff_t>(params.size()),
                    "gradient bucket layout: not every parameter is in a bucket");
        buckets = layout;
        for (size_t i = 0; i < buckets.size(); ++i)
            limits.push_back(i == 0 ? first_cap : cap);  // as a rebuild sizes them
    }
    bucket_count_ = buckets.size();
    std::unordered_map<size_t, std::string> param_names;
    for (size_t i = 0; i < names.size(); ++i)
        param_names[i] = names[i];
    for (size_t i = 0; i < params.size(); ++i)
        index_of_[params[i].unsafeGetTensorImpl()] = i;
    // gradient_as_bucket_view stays off: the optimizer's gradients are views of its flat buffer.
    reducer_ = make_reducer(params, std::move(buckets), std::move(limits), group, static_cast<int64_t>(cap),
                            std::move(param_names));
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::before_sync_forward() {
    reducer_->prepare_for_forward();
    reducer_->rebuild_buckets();  // a no-op except once, after the first synchronized step
}

void GradientReducer::before_sync_backward(const torch::Tensor& loss) {
    reducer_->prepare_for_backward({loss});
}

GradientReducer::Layout GradientReducer::layout() {
    reducer_->rebuild_buckets();  // what the next forward would do first (a no-op once rebuilt)
    Layout layout;
    for (const c10d::GradBucket& bucket : reducer_->get_grad_buckets(/*return_zero_tensors=*/false)) {
        std::vector<size_t>& indices = layout.emplace_back();
        for (const at::Tensor& param : bucket.getParameters())
            indices.push_back(index_of_.at(param.unsafeGetTensorImpl()));
    }
    return layout;
}

void GradientReducer::abandon() {
    (void)reducer_.release();
}

}  // namespace slipway::dist
