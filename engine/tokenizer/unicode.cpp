// UTF-8 validation and lossy decoding, the byte-level alphabet, and NFC through ICU's unorm2.
#include "tokenizer/unicode.h"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <vector>

namespace slipway::tokenizer {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not valid (the Unicode "maximal subpart"
// rules: a bad continuation ends the sequence early).
size_t valid_sequence_at(std::string_view s, size_t i, size_t* bad_length) {
    const auto byte = [&s](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char lead = byte(i);
    *bad_length = 1;
    if (lead < 0x80) return 1;
    size_t need;
    unsigned char low = 0x80, high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        need = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        need = 2;
        if (lead == 0xE0) low = 0xA0;
        if (lead == 0xED) high = 0x9F;  // no surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        need = 3;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;
    } else {
        return 0;
    }
    for (size_t k = 1; k <= need; ++k) {
        if (i + k >= s.size()) return 0;
        const unsigned char c = byte(i + k);
        const unsigned char lo = k == 1 ? low : 0x80;
        const unsigned char hi = k == 1 ? high : 0xBF;
        if (c < lo || c > hi) return 0;
        *bad_length = k + 1;
    }
    return need + 1;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        size_t bad = 0;
        const size_t n = valid_sequence_at(text, i, &bad);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string utf8_lossy(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    size_t i = 0;
    while (i < bytes.size()) {
        size_t bad = 0;
        const size_t n = valid_sequence_at(bytes, i, &bad);
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

std::string to_nfc(std::string_view text) {
    // ASCII is always NFC: the common case costs one scan.
    bool ascii = true;
    for (char c : text) {
        if (static_cast<unsigned char>(c) >= 0x80) {
            ascii = false;
            break;
        }
    }
    if (ascii) return std::string(text);
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* nfc = unorm2_getNFCInstance(&status);
    if (U_FAILURE(status)) return std::string(text);
    std::vector<UChar> utf16(text.size() + 1);
    int32_t utf16_length = 0;
    u_strFromUTF8(utf16.data(), static_cast<int32_t>(utf16.size()), &utf16_length, text.data(),
                  static_cast<int32_t>(text.size()), &status);
    if (U_FAILURE(status)) return std::string(text);
    if (unorm2_quickCheck(nfc, utf16.data(), utf16_length, &status) == UNORM_YES && U_SUCCESS(status)) {
        return std::string(text);
    }
    status = U_ZERO_ERROR;
    std::vector<UChar> normalized(static_cast<size_t>(utf16_length) * 3 + 16);
    const int32_t normalized_length = unorm2_normalize(nfc, utf16.data(), utf16_length, normalized.data(),
                                                       static_cast<int32_t>(normalized.size()), &status);
    if (U_FAILURE(status)) return std::string(text);
    std::string out(static_cast<size_t>(normalized_length) * 3 + 4, '\0');
    int32_t out_length = 0;
    u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &out_length, normalized.data(),
                normalized_length, &status);
    if (U_FAILURE(status)) return std::string(text);
    out.resize(static_cast<size_t>(out_length));
    return out;
}

}  // namespace slipway::tokenizer
