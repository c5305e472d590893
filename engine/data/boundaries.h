// Where a training block may start: the split modes of data.split, and the paragraph starts of a text
// (a paragraph begins at the first non-whitespace character after a blank line).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace slipway::data {

enum class SplitMode {
    kDocument,   // blocks start at a document start
    kParagraph,  // blocks start at a document or a paragraph start
    kConcat,     // blocks tile the concatenation of all documents, like HF run_clm's group_texts
};

std::optional<SplitMode> parse_split_mode(std::string_view name);  // "document" | "paragraph" | "concat"
const char* split_mode_name(SplitMode mode);

// Byte offsets where the text is cut into paragraphs: always 0 first, then every position p > 0 whose
// character is not ASCII whitespace and whose preceding whitespace run holds at least two '\n' ("\n\n",
// "\r\n\r\n", "\n  \n"). Piece i is [starts[i], starts[i+1]): it keeps its trailing newlines, so the
// pieces concatenate back to the text.
std::vector<size_t> paragraph_starts(std::string_view text);

}  // namespace slipway::data
