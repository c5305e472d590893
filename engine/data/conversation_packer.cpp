// The first-fit conversation packer of conversation_packer.h.
#include "data/conversation_packer.h"

#include <utility>

#include "data/token_cache_meta.h"

namespace slipway::data {

ConversationPacker::ConversationPacker(uint64_t block_size, uint32_t pad_token, size_t open_blocks)
    : block_size_(block_size), pad_token_(pad_token), open_limit_(open_blocks < 1 ? 1 : open_blocks) {}

void ConversationPacker::add(const std::vector<uint32_t>& conversation) {
    if (conversation.empty() || conversation.size() > block_size_) return;
    std::vector<uint32_t>* target = nullptr;
    for (std::vector<uint32_t>& block : open_) {
        if (block.size() + conversation.size() <= block_size_) {
            target = &block;
            break;
        }
    }
    if (!target) {
        if (open_.size() == open_limit_) close_front();
        open_.emplace_back();
        open_.back().reserve(block_size_);
        target = &open_.back();
    }
    const size_t start = target->size();
    target->insert(target->end(), conversation.begin(), conversation.end());
    (*target)[start] |= kDocumentStartBit;
    // A full block waits for nothing; closing it keeps the window for blocks that still have room.
    if (target->size() == block_size_) {
        for (auto it = open_.begin(); it != open_.end(); ++it) {
            if (&*it == target) {
                close(*it);
                open_.erase(it);
                break;
            }
        }
    }
}

void ConversationPacker::finish() {
    while (!open_.empty())
        close_front();
}

std::vector<std::vector<uint32_t>> ConversationPacker::take_blocks() {
    return std::exchange(closed_, {});
}

void ConversationPacker::close_front() {
    close(open_.front());
    open_.pop_front();
}

void ConversationPacker::close(std::vector<uint32_t>& block) {
    const size_t used = block.size();
    if (used < block_size_) {
        padding_ += block_size_ - used;
        block.resize(block_size_, pad_token_ | kUntrainedTokenBit);
        block[used] |= kDocumentStartBit;
    }
    closed_.push_back(std::move(block));
}

}  // namespace slipway::data
