// Pre-tokenizers of tokenizer.json (Split, ByteLevel, Metaspace, Sequence): cut normalized text into the
// pieces the model tokenizes one by one. Anything else is an error naming the component.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"

namespace slipway::tokenizer {

struct Piece {
    std::string text;
    bool at_input_start = false;  // begins at offset 0 of the original input (Metaspace "first")
};

class PreTokenizer {
public:
    virtual ~PreTokenizer() = default;
    // Replaces `pieces` by their finer split.
    [[nodiscard]] virtual Status pre_tokenize(std::vector<Piece>& pieces) const = 0;
};

// nullptr for a JSON null (the whole text is one piece).
Result<std::shared_ptr<const PreTokenizer>> make_pre_tokenizer(const nlohmann::json& spec);

// How a Split pre-tokenizer treats the delimiter matches (HF SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// Cuts `text` at the [begin, end) `matches` according to `behavior`; returns the pieces' byte ranges.
std::vector<std::pair<size_t, size_t>> split_by_matches(size_t text_size,
                                                        const std::vector<std::pair<size_t, size_t>>& matches,
                                                        SplitBehavior behavior, bool invert);

}  // namespace slipway::tokenizer
