// Cuts a stream of tokenized documents into training blocks of exactly block_size tokens, streaming
// (documents go in one by one; block start offsets come out as soon as they are decided).
//
// concat: blocks tile the concatenation: [0, S), [S, 2S), ...; the remainder (< S) is dropped, exactly
//   HF run_clm's group_texts.
// document / paragraph: every block starts at a boundary (the offsets the caller marks as block-start
//   candidates: document starts, plus paragraph starts in paragraph mode). After a block [b, b+S) the
//   next one starts at the largest boundary in (b, b+S] (the tokens between it and b+S are repeated);
//   if there is none, at the smallest boundary > b+S (the tokens between are dropped). A block that
//   would run past the end is dropped.
//
// Identity (after finish): blocks * block_size == tokens - dropped + repeated, since no token is ever
// covered by more than two blocks (the boundary after b+S exceeds b+S).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "data/boundaries.h"

namespace slipway::data {

struct CutStats {
    uint64_t tokens = 0;    // tokens added
    uint64_t blocks = 0;    // blocks emitted
    uint64_t dropped = 0;   // tokens in no block (the tail is counted by finish())
    uint64_t repeated = 0;  // tokens in two consecutive blocks
};

class BlockCutter {
public:
    BlockCutter(SplitMode mode, uint64_t block_size);

    // Appends a document of `num_tokens` tokens. `starts` are offsets within it where a block may start,
    // ascending (the document start 0 is implied; ignored in concat mode). Offsets >= num_tokens are ignored.
    void add_document(uint64_t num_tokens, const std::vector<uint32_t>& starts);
    // No more documents: decides the last blocks and counts the tail as dropped.
    void finish();

    // Start offsets (into the concatenation of all documents) of blocks decided since the last call.
    std::vector<uint64_t> take_blocks();
    const CutStats& stats() const { return stats_; }
    uint64_t block_size() const { return block_size_; }

private:
    void advance(bool final);
    void advance_concat(bool final);
    void emit(uint64_t start);

    SplitMode mode_;
    uint64_t block_size_;
    CutStats stats_;
    std::deque<uint64_t> pending_;  // boundaries after the current start, ascending
    bool has_current_ = false;      // current_ is a start whose block is not yet emitted
    uint64_t current_ = 0;
    uint64_t covered_end_ = 0;  // end of the last block emitted
    std::vector<uint64_t> ready_;
    bool finished_ = false;
};

}  // namespace slipway::data
