// Stripping control characters from server-sent prompt text (see prompt_text.h).
#include "remote/ssh/prompt_text.h"

#include <cstdint>

namespace slipway::remote {
namespace {

constexpr char32_t kInvalid = 0xFFFFFFFF;

// Decodes one UTF-8 code point at text[i] (advancing i); kInvalid (advancing one byte) for a malformed,
// overlong or surrogate sequence.
char32_t next_code_point(std::string_view text, std::size_t& i) {
    const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
    const std::uint8_t lead = byte(i);
    int length = 0;
    char32_t cp = 0;
    if (lead < 0x80) {
        ++i;
        return lead;
    } else if ((lead & 0xE0) == 0xC0) {
        length = 2;
        cp = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3;
        cp = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4;
        cp = lead & 0x07;
    } else {
        ++i;
        return kInvalid;
    }
    if (i + length > text.size()) {
        ++i;
        return kInvalid;
    }
    for (int k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) {
            ++i;
            return kInvalid;
        }
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    static constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kSmallest[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        ++i;
        return kInvalid;
    }
    i += length;
    return cp;
}

bool is_bidi_control(char32_t cp) {
    return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// Skips a control string (OSC, DCS, SOS, PM, APC) up to and including its terminator: BEL, ESC \ or ST.
void skip_control_string(std::string_view text, std::size_t& i) {
    while (i < text.size()) {
        const char32_t cp = next_code_point(text, i);
        if (cp == 0x07 || cp == 0x9C) return;
        if (cp == 0x1B && i < text.size() && text[i] == '\\') {
            ++i;
            return;
        }
    }
}

// Skips a CSI's parameter and intermediate bytes and its final byte (0x40-0x7E).
void skip_csi(std::string_view text, std::size_t& i) {
    while (i < text.size()) {
        const auto c = static_cast<std::uint8_t>(text[i++]);
        if (c >= 0x40 && c <= 0x7E) return;
        if (c < 0x20 || c > 0x3F) {  // not a parameter or intermediate byte: a broken sequence ends here
            --i;
            return;
        }
    }
}

}  // namespace

std::string printable_prompt_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t start = i;
        const char32_t cp = next_code_point(text, i);
        if (cp == kInvalid) {
            out += '?';
        } else if (cp == 0x1B) {
            if (i >= text.size()) break;
            const char kind = text[i++];
            if (kind == '[') {
                skip_csi(text, i);
            } else if (kind == ']' || kind == 'P' || kind == 'X' || kind == '^' || kind == '_') {
                skip_control_string(text, i);
            } else {
                // ESC, intermediates (0x20-0x2F), one final byte: e.g. ESC ( B, ESC 7, ESC c.
                while (kind >= 0x20 && kind <= 0x2F && i < text.size() &&
                       static_cast<std::uint8_t>(text[i]) >= 0x20 &&
                       static_cast<std::uint8_t>(text[i]) <= 0x2F)
                    ++i;
                if (kind >= 0x20 && kind <= 0x2F && i < text.size()) ++i;
            }
        } else if (cp == 0x9B) {
            skip_csi(text, i);
        } else if (cp == 0x9D || cp == 0x90 || cp == 0x98 || cp == 0x9E || cp == 0x9F) {
            skip_control_string(text, i);
        } else if ((cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||
                   is_bidi_control(cp)) {
            // dropped
        } else {
            out.append(text.substr(start, i - start));
        }
    }
    return out;
}

}  // namespace slipway::remote
