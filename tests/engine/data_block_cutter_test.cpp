// Tests of the streaming block cutter against a direct, non-streaming statement of the rules: blocks
// start at boundaries, the next start is the largest boundary inside the block end (repeat) or the
// first one after it (drop), concat mode equals HF group_texts, and the counting identity holds.
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "data/block_cutter.h"

namespace slipway::data {
namespace {

struct Docs {
    std::vector<uint64_t> lengths;              // tokens per document
    std::vector<std::vector<uint32_t>> starts;  // paragraph starts inside each
};

struct Expected {
    std::vector<uint64_t> blocks;
    uint64_t tokens = 0, dropped = 0, repeated = 0;
};

// The rules of block_cutter.h, written plainly over the whole input.
Expected reference(const Docs& docs, SplitMode mode, uint64_t size) {
    Expected e;
    std::vector<uint64_t> boundaries;
    for (size_t d = 0; d < docs.lengths.size(); ++d) {
        boundaries.push_back(e.tokens);
        for (uint32_t s : docs.starts[d]) {
            if (s > 0 && s < docs.lengths[d]) boundaries.push_back(e.tokens + s);
        }
        e.tokens += docs.lengths[d];
    }
    std::vector<bool> covered(e.tokens, false);
    if (mode == SplitMode::kConcat) {
        for (uint64_t b = 0; b + size <= e.tokens; b += size)
            e.blocks.push_back(b);
    } else if (!boundaries.empty()) {
        uint64_t b = boundaries.front();
        while (b + size <= e.tokens) {
            e.blocks.push_back(b);
            const uint64_t end = b + size;
            uint64_t next = UINT64_MAX;
            for (uint64_t x : boundaries) {
                if (x > b && x <= end) next = x;  // the largest one inside
            }
            if (next == UINT64_MAX) {
                for (uint64_t x : boundaries) {
                    if (x > end) {
                        next = x;
                        break;
                    }
                }
            }
            if (next == UINT64_MAX) break;
            b = next;
        }
    }
    std::vector<int> coverage(e.tokens, 0);
    for (uint64_t b : e.blocks) {
        for (uint64_t t = b; t < b + size; ++t)
            ++coverage[t];
    }
    for (int c : coverage) {
        if (c == 0) ++e.dropped;
        if (c > 1) e.repeated += static_cast<uint64_t>(c - 1);
    }
    return e;
}

Expected run_cutter(const Docs& docs, SplitMode mode, uint64_t size) {
    BlockCutter cutter(mode, size);
    Expected e;
    for (size_t d = 0; d < docs.lengths.size(); ++d) {
        cutter.add_document(docs.lengths[d], docs.starts[d]);
        for (uint64_t b : cutter.take_blocks())
            e.blocks.push_back(b);
    }
    cutter.finish();
    for (uint64_t b : cutter.take_blocks())
        e.blocks.push_back(b);
    e.tokens = cutter.stats().tokens;
    e.dropped = cutter.stats().dropped;
    e.repeated = cutter.stats().repeated;
    EXPECT_EQ(cutter.stats().blocks, e.blocks.size());
    return e;
}

Docs random_docs(std::mt19937_64& rng, size_t count, uint64_t max_length, bool paragraphs) {
    Docs docs;
    for (size_t i = 0; i < count; ++i) {
        const uint64_t length = 1 + rng() % max_length;
        std::set<uint32_t> starts;
        if (paragraphs) {
            for (uint64_t k = rng() % 4; k > 0; --k)
                starts.insert(static_cast<uint32_t>(1 + rng() % length));
        }
        docs.lengths.push_back(length);
        docs.starts.emplace_back(starts.begin(), starts.end());
    }
    return docs;
}

TEST(BlockCutter, WorkedExample) {
    // Documents of 5, 3 and 10 tokens: boundaries 0, 5, 8; block size 4.
    const Docs docs{{5, 3, 10}, {{}, {}, {}}};
    const Expected e = run_cutter(docs, SplitMode::kDocument, 4);
    EXPECT_EQ(e.blocks, std::vector<uint64_t>({0, 5, 8}));  // [0,4) drops token 4; [5,9) and [8,12) share 8
    EXPECT_EQ(e.dropped, 1u + 6u);                          // token 4, and 12..17 after the last block
    EXPECT_EQ(e.repeated, 1u);
}

TEST(BlockCutter, MatchesTheRulesOnRandomInput) {
    std::mt19937_64 rng(2024);
    for (int trial = 0; trial < 400; ++trial) {
        const SplitMode mode = trial % 3 == 0   ? SplitMode::kDocument
                               : trial % 3 == 1 ? SplitMode::kParagraph
                                                : SplitMode::kConcat;
        const uint64_t size = 1 + rng() % 24;
        const Docs docs = random_docs(rng, rng() % 30, 1 + rng() % 40, mode == SplitMode::kParagraph);
        const Expected want = reference(docs, mode, size);
        const Expected got = run_cutter(docs, mode, size);
        ASSERT_EQ(got.blocks, want.blocks) << "trial " << trial;

        EXPECT_EQ(got.tokens, want.tokens);
        EXPECT_EQ(got.dropped, want.dropped) << "trial " << trial;
        EXPECT_EQ(got.repeated, want.repeated) << "trial " << trial;
        EXPECT_EQ(got.blocks.size() * size, got.tokens - got.dropped + got.repeated);  // the identity
    }
}

TEST(BlockCutter, EveryBlockStartsAtABoundary) {
    std::mt19937_64 rng(5);
    const Docs docs = random_docs(rng, 200, 60, true);
    std::set<uint64_t> boundaries;
    uint64_t at = 0;
    for (size_t d = 0; d < docs.lengths.size(); ++d) {
        boundaries.insert(at);
        for (uint32_t s : docs.starts[d])
            boundaries.insert(at + s);
        at += docs.lengths[d];
    }
    const Expected got = run_cutter(docs, SplitMode::kParagraph, 16);
    ASSERT_FALSE(got.blocks.empty());
    for (uint64_t b : got.blocks)
        EXPECT_TRUE(boundaries.count(b)) << b;
    for (size_t i = 1; i < got.blocks.size(); ++i)
        EXPECT_GT(got.blocks[i], got.blocks[i - 1]);
}

TEST(BlockCutter, ConcatEqualsGroupTexts) {
    // group_texts: total = (len(concat) // S) * S; blocks = concat[i : i + S] for i in range(0, total, S).
    std::mt19937_64 rng(9);
    const Docs docs = random_docs(rng, 50, 30, false);
    const Expected got = run_cutter(docs, SplitMode::kConcat, 7);
    const uint64_t total = (got.tokens / 7) * 7;
    std::vector<uint64_t> want;
    for (uint64_t i = 0; i < total; i += 7)
        want.push_back(i);
    EXPECT_EQ(got.blocks, want);
    EXPECT_EQ(got.dropped, got.tokens - total);
    EXPECT_EQ(got.repeated, 0u);
}

TEST(BlockCutter, AStartWhoseBlockNeverFitsIsNotCountedAsRepeated) {
    // Boundaries 0, 5, 8, 16, 23, 29, 32, 39, 40, 47, 57; 60 tokens; size 23: blocks at 0 and 23, and
    // the start chosen after [23, 46), 40, would end at 63 > 60.
    const Docs docs{{5, 3, 8, 7, 6, 3, 7, 1, 7, 10, 3}, std::vector<std::vector<uint32_t>>(11)};
    const Expected e = run_cutter(docs, SplitMode::kDocument, 23);
    EXPECT_EQ(e.blocks, std::vector<uint64_t>({0, 23}));
    EXPECT_EQ(e.repeated, 0u);
    EXPECT_EQ(e.dropped, 14u);
}

TEST(BlockCutter, LongDocumentKeepsOnlyItsFirstBlockInDocumentMode) {
    const Docs docs{{100, 10}, {{}, {}}};
    const Expected e = run_cutter(docs, SplitMode::kDocument, 8);
    EXPECT_EQ(e.blocks, std::vector<uint64_t>({0, 100}));
    EXPECT_EQ(e.dropped, 92u + 2u);
}

TEST(BlockCutter, NothingFitsGivesNoBlock) {
    const Docs docs{{3, 2}, {{}, {}}};
    for (SplitMode mode : {SplitMode::kDocument, SplitMode::kConcat}) {
        const Expected e = run_cutter(docs, mode, 8);
        EXPECT_TRUE(e.blocks.empty());
        EXPECT_EQ(e.dropped, 5u);
    }
}

}  // namespace
}  // namespace slipway::data
