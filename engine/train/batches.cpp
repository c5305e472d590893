// load_batch (batches.h): copies uint32 token ids out of the mapped cache into int64 tensors, with the
// trained targets and the documents read from the marks the cache keeps on each id.
#include "train/batches.h"

#include <algorithm>

#include <torch/torch.h>

namespace slipway::train {
namespace {

bool trained(uint32_t token) {
    return (token & data::kUntrainedTokenBit) == 0;
}

// Tokens a conversation batch needs: through the last trained token of any row (at least 2).
int64_t used_length(const std::vector<data::TokenSpan>& blocks) {
    int64_t used = 0;
    for (const data::TokenSpan& block : blocks) {
        const auto t = static_cast<int64_t>(block.size);
        used = std::max(used, std::min<int64_t>(2, t));
        for (int64_t i = t - 1; i >= used; --i) {
            if (trained(block[static_cast<size_t>(i)])) {
                used = i + 1;
                break;
            }
        }
    }
    return used;
}

// To a GPU from pinned memory without waiting: a copy from pageable memory would hold the host until the GPU
// has run everything queued before it, so the GPU would then idle while the host launches the next step.
// (The pinned block is not reused before the copy is done: the caching host allocator records it.)
torch::Tensor to_device(const torch::Tensor& host, torch::Device device) {
    return device.is_cpu() ? host : host.pin_memory().to(device, /*non_blocking=*/true);
}

}  // namespace

Batch load_batch(const data::TokenCache& cache, data::Split split, const std::vector<uint64_t>& indices,
                 size_t begin, size_t count, torch::Device device) {
    std::vector<data::TokenSpan> blocks;
    for (size_t b = 0; b < count; ++b)
        blocks.push_back(cache.block(split, indices[begin + b]));
    const bool conversations = cache.meta().conversations();
    return batch_of_blocks(blocks, conversations, conversations && cache.meta().packed, device);
}

Batch batch_of_blocks(const std::vector<data::TokenSpan>& blocks, bool conversations, bool packed,
                      torch::Device device) {
    const auto b_count = static_cast<int64_t>(blocks.size());
    const int64_t t = blocks.empty()  ? 0
                      : conversations ? used_length(blocks)
                                      : static_cast<int64_t>(blocks.front().size);
    torch::Tensor ids = torch::empty({b_count, t}, torch::kInt64);  // (B, T)
    torch::Tensor positions, documents;                             // (B, T) each, packed only
    if (packed) {
        positions = torch::empty({b_count, t}, torch::kInt64);
        documents = torch::empty({b_count, t}, torch::kInt64);
    }
    std::vector<int64_t> rows;
    int64_t* out = ids.data_ptr<int64_t>();
    int64_t* pos = packed ? positions.data_ptr<int64_t>() : nullptr;
    int64_t* doc = packed ? documents.data_ptr<int64_t>() : nullptr;
    for (int64_t b = 0; b < b_count; ++b) {
        const data::TokenSpan& block = blocks[static_cast<size_t>(b)];
        int64_t document = -1, start = 0;
        for (int64_t i = 0; i < t; ++i) {
            const uint32_t token = block[static_cast<size_t>(i)];
            out[b * t + i] = token & data::kTokenIdMask;
            const bool starts = packed && (i == 0 || (token & data::kDocumentStartBit) != 0);
            // A document's first token is no target: the token before it belongs to another document.
            if (conversations && i > 0 && !starts && trained(token)) rows.push_back(b * (t - 1) + i - 1);
            if (!packed) continue;
            if (starts) {
                ++document;
                start = i;
            }
            pos[b * t + i] = i - start;
            doc[b * t + i] = document;
        }
    }
    Batch batch;
    batch.ids = to_device(ids, device);
    if (conversations) batch.trained = to_device(torch::tensor(rows, torch::kInt64), device);  // (K)
    if (packed) batch.documents = {to_device(positions, device), to_device(documents, device)};
    return batch;
}

}  // namespace slipway::train
