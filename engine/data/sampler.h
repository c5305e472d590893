// DistributedBlockSampler: which blocks each rank trains on in each epoch, like torch's
// DistributedSampler but with a generator whose output is fixed here (not implementation-defined), so
// every rank, platform and restart agrees. Resumable from any sample index.
//
// Epoch e: perm = Fisher-Yates shuffle of [0, n) driven by SplitMix64 seeded with
// splitmix64_mix(seed) ^ splitmix64_mix(e + 1), j drawn in [0, i] by Lemire's unbiased multiply-shift.
// drop_last: the first floor(n / world) * world entries are used; otherwise the list is padded by
// repeating it from the start up to ceil(n / world) * world. Rank r takes positions r, r + world, ...
#pragma once

#include <cstdint>
#include <vector>

#include "contract/status.h"

namespace slipway::data {

// The generator: SplitMix64 (Steele, Lea, Flood 2014).
class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : state_(seed) {}
    uint64_t next();
    uint64_t below(uint64_t bound);  // uniform in [0, bound), bound > 0

private:
    uint64_t state_;
};

// The shuffled order of [0, n) for (seed, epoch).
std::vector<uint64_t> shuffled_indices(uint64_t n, uint64_t seed, uint64_t epoch);

class DistributedBlockSampler {
public:
    // Errors: world_size < 1, rank outside [0, world_size).
    static Result<DistributedBlockSampler> create(uint64_t num_blocks, int64_t world_size, int64_t rank,
                                                  uint64_t seed, bool drop_last = true);

    void set_epoch(uint64_t epoch);  // recomputes the permutation
    uint64_t epoch() const { return epoch_; }

    uint64_t num_samples() const { return num_samples_; }  // per rank per epoch
    // Block index of this rank's sample `i` (< num_samples) in the current epoch.
    uint64_t at(uint64_t i) const;
    // This rank's samples from `start_sample` to the end of the epoch (resume: the samples already seen).
    std::vector<uint64_t> indices(uint64_t start_sample = 0) const;

private:
    DistributedBlockSampler() = default;
    uint64_t num_blocks_ = 0;
    uint64_t world_ = 1;
    uint64_t rank_ = 0;
    uint64_t seed_ = 0;
    bool drop_last_ = true;
    uint64_t epoch_ = 0;
    uint64_t num_samples_ = 0;
    std::vector<uint64_t> permutation_;
};

}  // namespace slipway::data
