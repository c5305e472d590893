// UTF-8 helpers for the tokenizers: validation, code point iteration, the GPT-2 byte <-> character map
// of byte-level BPE, and NFC / NFKC normalization (our own, over tables generated from ICU:
// normalization.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "contract/utf8.h"

namespace slipway::tokenizer {

// Length in bytes of the UTF-8 sequence that starts with `lead` (1 for a stray continuation byte).
inline size_t utf8_sequence_length(unsigned char lead) {
    if (lead < 0x80) return 1;
    if ((lead >> 5) == 0x6) return 2;
    if ((lead >> 4) == 0xE) return 3;
    if ((lead >> 3) == 0x1E) return 4;
    return 1;
}

using slipway::append_utf8;  // contract/utf8.h

// Invalid sequences become U+FFFD, one per maximal invalid subpart, as Rust's from_utf8_lossy does.
std::string utf8_lossy(std::string_view bytes);

// GPT-2's bytes_to_unicode(): every byte maps to a printable character, used by byte-level BPE.
struct ByteLevelAlphabet {
    std::array<std::string, 256> byte_to_utf8;  // UTF-8 of the character for each byte
    std::array<int16_t, 324> char_to_byte;      // code point (< 324) -> byte, or -1
};
const ByteLevelAlphabet& byte_level_alphabet();

// Canonical composition (NFC). Quick-checks first, so text that is already NFC is returned as is; text that
// is not UTF-8 is returned as is too.
std::string to_nfc(std::string_view text);
// Compatibility composition (NFKC), the same way.
std::string to_nfkc(std::string_view text);

// The Unicode version of the normalization tables ("15.0").
const char* unicode_version();

}  // namespace slipway::tokenizer
