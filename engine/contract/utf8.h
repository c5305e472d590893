// UTF-8 primitives shared by the MLLOG parser and the tokenizers: well-formed sequence checks (Unicode
// table 3-7: no overlongs, surrogates or code points past U+10FFFF) and encoding of a code point.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace slipway {

// Length of the well-formed UTF-8 sequence at s[i] (i < s.size()), or 0 when it is not one. bad_length
// (optional) receives how many bytes the invalid "maximal subpart" spans (a bad continuation ends it).
size_t utf8_sequence_at(std::string_view s, size_t i, size_t* bad_length = nullptr);

void append_utf8(std::string& out, char32_t code_point);

// Every byte belongs to a well-formed sequence.
bool is_valid_utf8(std::string_view text);

}  // namespace slipway
