// UTF-8 validation and lossy decoding, the byte-level alphabet, and NFC / NFKC through ICU's unorm2.
#include "tokenizer/unicode.h"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <vector>

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

namespace {

// Text through one of ICU's normalizers (NFC, NFKC). Quick-checks first, so text already in the form is
// returned as is; on an ICU error the text is returned unchanged.
std::string normalize_with(const UNormalizer2* normalizer, std::string_view text) {
    // ASCII is in every normalization form: the common case costs one scan.
    bool ascii = true;
    for (char c : text) {
        if (static_cast<unsigned char>(c) >= 0x80) {
            ascii = false;
            break;
        }
    }
    if (ascii || normalizer == nullptr) return std::string(text);
    UErrorCode status = U_ZERO_ERROR;
    std::vector<UChar> utf16(text.size() + 1);
    int32_t utf16_length = 0;
    u_strFromUTF8(utf16.data(), static_cast<int32_t>(utf16.size()), &utf16_length, text.data(),
                  static_cast<int32_t>(text.size()), &status);
    if (U_FAILURE(status)) return std::string(text);
    if (unorm2_quickCheck(normalizer, utf16.data(), utf16_length, &status) == UNORM_YES &&
        U_SUCCESS(status)) {
        return std::string(text);
    }
    status = U_ZERO_ERROR;
    std::vector<UChar> normalized(static_cast<size_t>(utf16_length) * 3 + 16);
    int32_t normalized_length = unorm2_normalize(normalizer, utf16.data(), utf16_length, normalized.data(),
                                                 static_cast<int32_t>(normalized.size()), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {  // NFKC can expand one character into 18
        status = U_ZERO_ERROR;
        normalized.resize(static_cast<size_t>(normalized_length) + 1);
        normalized_length = unorm2_normalize(normalizer, utf16.data(), utf16_length, normalized.data(),
                                             static_cast<int32_t>(normalized.size()), &status);
    }
    if (U_FAILURE(status)) return std::string(text);
    std::string out(static_cast<size_t>(normalized_length) * 3 + 4, '\0');
    int32_t out_length = 0;
    u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &out_length, normalized.data(),
                normalized_length, &status);
    if (U_FAILURE(status)) return std::string(text);
    out.resize(static_cast<size_t>(out_length));
    return out;
}

}  // namespace

std::string to_nfc(std::string_view text) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* nfc = unorm2_getNFCInstance(&status);
    return normalize_with(U_SUCCESS(status) ? nfc : nullptr, text);
}

std::string to_nfkc(std::string_view text) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* nfkc = unorm2_getNFKCInstance(&status);
    return normalize_with(U_SUCCESS(status) ? nfkc : nullptr, text);
}

}  // namespace slipway::tokenizer
