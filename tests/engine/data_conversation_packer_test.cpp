// ConversationPacker: first fit over the open blocks, a start mark on each conversation and on the
// padding, full blocks closed at once, the oldest closed when the window is full, padding counted.
#include <gtest/gtest.h>

#include "data/conversation_packer.h"
#include "data/token_cache_meta.h"

namespace slipway::data {
namespace {

constexpr uint32_t kPad = 9;

std::vector<uint32_t> conversation(uint32_t id, size_t length) {
    return std::vector<uint32_t>(length, id);
}

// Each block as the ids of its documents' first tokens and their lengths, padding as 'P'.
std::string layout(const std::vector<uint32_t>& block) {
    std::string out;
    for (const uint32_t token : block) {
        if (token & kDocumentStartBit) {
            if (!out.empty()) out += ' ';
            out += (token & kTokenIdMask) == kPad && (token & kUntrainedTokenBit)
                       ? 'P'
                       : char('0' + (token & kTokenIdMask));
        }
        out += '.';
    }
    return out;
}

TEST(ConversationPacker, FirstFitOverOpenBlocks) {
    ConversationPacker packer(8, kPad);
    packer.add(conversation(1, 5));
    packer.add(conversation(2, 5));  // no room after 1: a second block
    packer.add(conversation(3, 3));  // fills the first block exactly: closed at once
    std::vector<std::vector<uint32_t>> blocks = packer.take_blocks();
    ASSERT_EQ(blocks.size(), 1u);
    EXPECT_EQ(layout(blocks[0]), "1..... 3...");
    packer.add(conversation(4, 2));
    packer.finish();
    blocks = packer.take_blocks();
    ASSERT_EQ(blocks.size(), 1u);
    EXPECT_EQ(layout(blocks[0]), "2..... 4.. P.");
    EXPECT_EQ(packer.padding_tokens(), 1u);
    EXPECT_EQ(blocks[0].back(), kPad | kUntrainedTokenBit | kDocumentStartBit);
    packer.add(conversation(5, 9));  // longer than a block: the caller's to cut or drop
    packer.finish();
    EXPECT_TRUE(packer.take_blocks().empty());
}

TEST(ConversationPacker, WindowClosesTheOldestBlock) {
    ConversationPacker packer(4, kPad, /*open_blocks=*/2);
    packer.add(conversation(1, 3));
    packer.add(conversation(2, 3));
    packer.add(conversation(3, 3));  // a third open block: the first closes, padded
    std::vector<std::vector<uint32_t>> blocks = packer.take_blocks();
    ASSERT_EQ(blocks.size(), 1u);
    EXPECT_EQ(layout(blocks[0]), "1... P.");
    packer.add(conversation(4, 1));  // first fit: into 2's block, which is then full
    blocks = packer.take_blocks();
    ASSERT_EQ(blocks.size(), 1u);
    EXPECT_EQ(layout(blocks[0]), "2... 4.");
    packer.finish();
    blocks = packer.take_blocks();
    ASSERT_EQ(blocks.size(), 1u);
    EXPECT_EQ(layout(blocks[0]), "3... P.");
    EXPECT_EQ(packer.padding_tokens(), 2u);
}

}  // namespace
}  // namespace slipway::data
