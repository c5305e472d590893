// make_batch (batches.h): copies uint32 token ids out of the mapped cache into an int64 tensor.
#include "train/batches.h"

#include <torch/torch.h>

namespace slipway::train {

torch::Tensor make_batch(const data::TokenCache& cache, data::Split split,
                         const std::vector<uint64_t>& indices, size_t begin, size_t count,
                         torch::Device device) {
    const auto t = static_cast<int64_t>(cache.block_size());
    torch::Tensor ids = torch::empty({static_cast<int64_t>(count), t}, torch::kInt64);  // (B, T)
    int64_t* out = ids.data_ptr<int64_t>();
    for (size_t b = 0; b < count; ++b) {
        const data::TokenSpan block = cache.block(split, indices[begin + b]);
        for (int64_t i = 0; i < t; ++i)
            out[static_cast<int64_t>(b) * t + i] = block[static_cast<size_t>(i)] & ~data::kUntrainedTokenBit;
    }
    return device.is_cpu() ? ids : ids.to(device, /*non_blocking=*/false);
}

torch::Tensor trained_targets(const data::TokenCache& cache, data::Split split,
                              const std::vector<uint64_t>& indices, size_t begin, size_t count,
                              torch::Device device) {
    if (!cache.meta().conversations()) return {};
    const auto t = static_cast<int64_t>(cache.block_size());
    std::vector<int64_t> rows;
    for (size_t b = 0; b < count; ++b) {
        const data::TokenSpan block = cache.block(split, indices[begin + b]);
        for (int64_t i = 1; i < t; ++i) {
            if ((block[static_cast<size_t>(i)] & data::kUntrainedTokenBit) == 0)
                rows.push_back(static_cast<int64_t>(b) * (t - 1) + i - 1);
        }
    }
    const torch::Tensor out = torch::tensor(rows, torch::kInt64);  // (K)
    return device.is_cpu() ? out : out.to(device);
}

}  // namespace slipway::train
