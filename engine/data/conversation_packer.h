// Packs tokenized conversations (each at most block_size tokens, untrained ones marked) into blocks of
// exactly block_size tokens, streaming: first fit over a bounded window of open blocks, so memory stays
// bounded and the order stays close to the input's. The first token of each conversation carries
// kDocumentStartBit (attention and positions restart there); a block's unused tail is padding: the pad
// token, untrained, a document of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace slipway::data {

class ConversationPacker {
public:
    // `pad_token`: the id padding repeats (the EOS); `open_blocks`: how many partly filled blocks wait for
    // a conversation that fits before the oldest is closed.
    ConversationPacker(uint64_t block_size, uint32_t pad_token, size_t open_blocks = 64);

    // Adds one conversation (1..block_size tokens; longer ones are the caller's to cut or drop).
    void add(const std::vector<uint32_t>& conversation);
    // No more conversations: closes every open block.
    void finish();

    // Blocks closed since the last call, block_size tokens each.
    std::vector<std::vector<uint32_t>> take_blocks();
    uint64_t padding_tokens() const { return padding_; }

private:
    void close_front();
    void close(std::vector<uint32_t>& block);

    uint64_t block_size_;
    uint32_t pad_token_;
    size_t open_limit_;
    std::deque<std::vector<uint32_t>> open_;  // oldest first
    std::vector<std::vector<uint32_t>> closed_;
    uint64_t padding_ = 0;
};

}  // namespace slipway::data
