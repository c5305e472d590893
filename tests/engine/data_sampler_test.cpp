// Tests of DistributedBlockSampler: shards are disjoint and equal, cover the epoch but the dropped
// tail, change with the epoch and the seed, are reproducible, and resume from any sample index.
#include <algorithm>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "data/sampler.h"

namespace slipway::data {
namespace {

DistributedBlockSampler make(uint64_t n, int64_t world, int64_t rank, uint64_t seed, bool drop_last = true) {
    Result<DistributedBlockSampler> s = DistributedBlockSampler::create(n, world, rank, seed, drop_last);
    EXPECT_TRUE(s.ok()) << s.error();
    return std::move(s).value();
}

TEST(Sampler, ShuffleIsAPermutationAndFixed) {
    const std::vector<uint64_t> order = shuffled_indices(1000, 42, 0);
    std::vector<uint64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (uint64_t i = 0; i < 1000; ++i)
        ASSERT_EQ(sorted[i], i);
    EXPECT_EQ(order, shuffled_indices(1000, 42, 0));
    EXPECT_NE(order, shuffled_indices(1000, 42, 1));
    EXPECT_NE(order, shuffled_indices(1000, 43, 0));
    // Pinned (and checked against a Python transcription of sampler.h): the order must not change
    // between builds, compilers or platforms; resume relies on it.
    EXPECT_EQ(shuffled_indices(10, 42, 0), std::vector<uint64_t>({4, 7, 1, 3, 5, 2, 6, 8, 0, 9}));
}

TEST(Sampler, ShardsAreDisjointEqualAndCoverAllButTheTail) {
    const uint64_t n = 103;
    const int64_t world = 4;
    for (uint64_t epoch : {0, 1, 7}) {
        std::set<uint64_t> seen;
        for (int64_t rank = 0; rank < world; ++rank) {
            DistributedBlockSampler s = make(n, world, rank, 1234);
            s.set_epoch(epoch);
            ASSERT_EQ(s.num_samples(), n / world);
            for (uint64_t index : s.indices()) {
                EXPECT_LT(index, n);
                EXPECT_TRUE(seen.insert(index).second) << "block " << index << " on two ranks";
            }
        }
        EXPECT_EQ(seen.size(), (n / world) * world);  // 3 blocks of the shuffled tail are dropped
    }
}

TEST(Sampler, RankTakesEveryWorldthPositionOfThePermutation) {
    DistributedBlockSampler s = make(20, 3, 2, 99);
    s.set_epoch(4);
    const std::vector<uint64_t> order = shuffled_indices(20, 99, 4);
    const std::vector<uint64_t> mine = s.indices();
    ASSERT_EQ(mine.size(), 6u);
    for (size_t i = 0; i < mine.size(); ++i)
        EXPECT_EQ(mine[i], order[2 + 3 * i]);
}

TEST(Sampler, EpochsDiffer) {
    DistributedBlockSampler s = make(500, 2, 0, 7);
    const std::vector<uint64_t> first = s.indices();
    s.set_epoch(1);
    EXPECT_NE(s.indices(), first);
    s.set_epoch(0);
    EXPECT_EQ(s.indices(), first);
}

TEST(Sampler, ResumeGivesTheSameRemainingSequence) {
    DistributedBlockSampler s = make(257, 3, 1, 5);
    s.set_epoch(3);
    const std::vector<uint64_t> all = s.indices();
    for (uint64_t start : {0, 1, 40, 85, 86}) {
        DistributedBlockSampler resumed = make(257, 3, 1, 5);  // a fresh process
        resumed.set_epoch(3);
        const std::vector<uint64_t> rest = resumed.indices(start);
        ASSERT_EQ(rest.size(), all.size() - std::min<size_t>(start, all.size()));
        EXPECT_TRUE(std::equal(rest.begin(), rest.end(), all.begin() + static_cast<std::ptrdiff_t>(start)));
        if (start < all.size()) {
            EXPECT_EQ(resumed.at(start), all[start]);
        }
    }
}

TEST(Sampler, WithoutDropLastPadsByWrapping) {
    std::vector<uint64_t> count(10, 0);
    for (int64_t rank = 0; rank < 4; ++rank) {
        DistributedBlockSampler s = make(10, 4, rank, 1, false);
        EXPECT_EQ(s.num_samples(), 3u);
        for (uint64_t index : s.indices())
            ++count[index];
    }
    for (uint64_t c : count)
        EXPECT_GE(c, 1u);  // every block at least once, 2 of them twice
    EXPECT_EQ(std::count(count.begin(), count.end(), 2u), 2);
}

TEST(Sampler, RejectsBadRankOrWorld) {
    EXPECT_FALSE(DistributedBlockSampler::create(10, 0, 0, 1).ok());
    EXPECT_FALSE(DistributedBlockSampler::create(10, 2, 2, 1).ok());
    EXPECT_FALSE(DistributedBlockSampler::create(10, 2, -1, 1).ok());
    EXPECT_EQ(make(1, 4, 3, 1).num_samples(), 0u);  // fewer blocks than ranks: nothing, not a crash
}

}  // namespace
}  // namespace slipway::data
