// UTF-8 lossy decoding and the byte-level alphabet (NFC / NFKC: normalization.cpp).
#include "tokenizer/unicode.h"

namespace slipway::tokenizer {

std::string utf8_lossy(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    size_t i = 0;
    while (i < bytes.size()) {
        size_t bad = 0;
        const size_t n = utf8_sequence_at(bytes, i, &bad);
        if (n > 0) {
            out.append(bytes.substr(i, n));
            i += n;
        } else {
            out += "\xEF\xBF\xBD";
            i += bad;
        }
    }
    return out;
}

const ByteLevelAlphabet& byte_level_alphabet() {
    static const ByteLevelAlphabet alphabet = [] {
        ByteLevelAlphabet a;
        a.char_to_byte.fill(-1);
        int next_extra = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
            const int cp = printable ? b : next_extra++;
            append_utf8(a.byte_to_utf8[b], static_cast<char32_t>(cp));
            a.char_to_byte[cp] = static_cast<int16_t>(b);
        }
        return a;
    }();
    return alphabet;
}

}  // namespace slipway::tokenizer
