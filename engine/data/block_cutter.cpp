// The streaming block cutter of block_cutter.h.
#include "data/block_cutter.h"

#include <utility>

namespace slipway::data {

BlockCutter::BlockCutter(SplitMode mode, uint64_t block_size) : mode_(mode), block_size_(block_size) {
    if (mode_ == SplitMode::kConcat) has_current_ = true;  // the first block starts at 0
}

void BlockCutter::add_document(uint64_t num_tokens, const std::vector<uint32_t>& starts) {
    if (finished_ || num_tokens == 0) return;
    const uint64_t base = stats_.tokens;
    stats_.tokens += num_tokens;
    if (mode_ == SplitMode::kConcat) {
        advance_concat(false);
        return;
    }
    auto push = [this](uint64_t offset) {
        if (offset >= stats_.tokens) return;
        const bool after = !pending_.empty() ? offset > pending_.back() : !has_current_ || offset > current_;
        if (after) pending_.push_back(offset);
    };
    push(base);  // the document start is always a boundary
    for (const uint32_t start : starts) {
        if (start > 0) push(base + start);
    }
    advance(false);
}

void BlockCutter::finish() {
    if (finished_) return;
    finished_ = true;
    if (mode_ == SplitMode::kConcat) {
        advance_concat(true);
    } else {
        advance(true);
    }
}

std::vector<uint64_t> BlockCutter::take_blocks() {
    return std::exchange(ready_, {});
}

void BlockCutter::emit(uint64_t start) {
    // Gaps and overlaps are counted against the previous block, so a start chosen for a block that
    // never fits is not counted as repeated.
    if (start > covered_end_) stats_.dropped += start - covered_end_;
    if (start < covered_end_) stats_.repeated += covered_end_ - start;
    covered_end_ = start + block_size_;
    ready_.push_back(start);
    ++stats_.blocks;
}

void BlockCutter::advance_concat(bool final) {
    while (current_ + block_size_ <= stats_.tokens) {
        emit(current_);
        current_ += block_size_;
    }
    if (final) stats_.dropped += stats_.tokens - covered_end_;
}

void BlockCutter::advance(bool final) {
    const uint64_t size = block_size_;
    while (true) {
        if (!has_current_) {
            if (pending_.empty()) break;
            current_ = pending_.front();
            pending_.pop_front();
            has_current_ = true;
        }
        const uint64_t end = current_ + size;
        // Every boundary <= end is known once one beyond it has arrived (or at the end of the input).
        if (!final && (pending_.empty() || pending_.back() <= end)) return;
        if (end > stats_.tokens) {  // only when final: no later start can fit either
            has_current_ = false;
            pending_.clear();
            break;
        }
        emit(current_);
        bool inside = false;
        while (!pending_.empty() && pending_.front() <= end) {  // the largest boundary in (start, end]
            current_ = pending_.front();
            pending_.pop_front();
            inside = true;
        }
        if (inside) continue;
        has_current_ = false;  // else the first boundary after the end, if any
    }
    if (final && stats_.tokens > covered_end_) stats_.dropped += stats_.tokens - covered_end_;
}

}  // namespace slipway::data
