// The seeded, resumable distributed sampler of sampler.h.
#include "data/sampler.h"

#include <string>
#include <utility>

#include "data/hash.h"

namespace slipway::data {

uint64_t SplitMix64::next() {
    state_ += 0x9E3779B97F4A7C15ull;
    return splitmix64_mix(state_);
}

uint64_t SplitMix64::below(uint64_t bound) {
    // Lemire, "Fast random integer generation in an interval" (2019): unbiased by rejection.
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
    auto low = static_cast<uint64_t>(m);
    if (low < bound) {
        const uint64_t threshold = (0 - bound) % bound;
        while (low < threshold) {
            m = static_cast<unsigned __int128>(next()) * bound;
            low = static_cast<uint64_t>(m);
        }
    }
    return static_cast<uint64_t>(m >> 64);
}

std::vector<uint64_t> shuffled_indices(uint64_t n, uint64_t seed, uint64_t epoch) {
    std::vector<uint64_t> order(n);
    for (uint64_t i = 0; i < n; ++i)
        order[i] = i;
    SplitMix64 rng(splitmix64_mix(seed) ^ splitmix64_mix(epoch + 1));
    for (uint64_t i = n; i > 1; --i) {
        const uint64_t j = rng.below(i);
        std::swap(order[i - 1], order[j]);
    }
    return order;
}

Result<DistributedBlockSampler> DistributedBlockSampler::create(uint64_t num_blocks, int64_t world_size,
                                                                int64_t rank, uint64_t seed, bool drop_last) {
    if (world_size < 1)
        return Status::Error("sampler: world size must be >= 1, got " + std::to_string(world_size));
    if (rank < 0 || rank >= world_size) {
        return Status::Error("sampler: rank must be in [0, " + std::to_string(world_size) + "), got " +
                             std::to_string(rank));
    }
    DistributedBlockSampler s;
    s.num_blocks_ = num_blocks;
    s.world_ = static_cast<uint64_t>(world_size);
    s.rank_ = static_cast<uint64_t>(rank);
    s.seed_ = seed;
    s.drop_last_ = drop_last;
    s.num_samples_ = drop_last ? num_blocks / s.world_ : (num_blocks + s.world_ - 1) / s.world_;
    s.set_epoch(0);
    return s;
}

void DistributedBlockSampler::set_epoch(uint64_t epoch) {
    epoch_ = epoch;
    permutation_ = shuffled_indices(num_blocks_, seed_, epoch);
}

uint64_t DistributedBlockSampler::at(uint64_t i) const {
    const uint64_t position = rank_ + i * world_;  // < ceil(n / world) * world
    return permutation_[position % num_blocks_];   // wraps only when padding (drop_last = false)
}

std::vector<uint64_t> DistributedBlockSampler::indices(uint64_t start_sample) const {
    std::vector<uint64_t> out;
    for (uint64_t i = start_sample; i < num_samples_; ++i)
        out.push_back(at(i));
    return out;
}

}  // namespace slipway::data
