// Added tokens (special or not) found in text before the model runs: leftmost-longest matching over a
// trie, with HF's lstrip / rstrip / single_word rules.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace slipway::tokenizer {

// A piece of input: either an added token (id set) or text for the normal pipeline.
struct Segment {
    std::string_view text;
    std::optional<int32_t> id;
    size_t offset = 0;  // byte offset in the text that was split
};

class AddedTokenMatcher {
public:
    explicit AddedTokenMatcher(const std::vector<const AddedToken*>& tokens);
    bool empty() const { return nodes_.size() == 1; }
    // Cuts `text` at every added token. Segments cover the text except stripped whitespace.
    std::vector<Segment> split(std::string_view text) const;

private:
    struct Node {
        std::map<unsigned char, int32_t> children;
        const AddedToken* token = nullptr;
    };
    std::vector<Node> nodes_;
    std::array<bool, 256> first_byte_{};  // quick skip of bytes that start no token
};

}  // namespace slipway::tokenizer
