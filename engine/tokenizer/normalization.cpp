// NFC and NFKC (unicode.h) by the algorithm of UAX #15 over the tables of unicode_tables.inc: decompose (the
// full canonical or compatibility mapping; Hangul syllables by arithmetic), put each run of combining marks
// in canonical order, then compose every pair that is not blocked. Text whose code points all pass the quick
// check is returned as it is, so ASCII, Cyrillic or CJK text costs one scan.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tokenizer/unicode.h"

namespace slipway::tokenizer {
namespace {

struct CombiningClass {
    char32_t code_point;
    uint8_t value;
};
struct Decomposition {
    char32_t code_point;
    uint32_t offset;  // into kDecompositionData
    uint32_t length;
};
struct Composition {
    char32_t first, second, composite;
};
struct CodePointRange {
    char32_t first, last;
};

#include "tokenizer/unicode_tables.inc"

// Hangul syllables: L V (T), composed and decomposed by arithmetic (Unicode 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount,
                   kSCount = kLCount * kNCount;

enum class Form { kNfc, kNfkc };

// The code point of the well-formed sequence at text[i] and its length, or 0 where there is none.
size_t next_code_point(std::string_view text, size_t i, char32_t& c) {
    const size_t n = utf8_sequence_at(text, i);
    if (n == 0) return 0;
    static constexpr unsigned char kLeadMask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    c = static_cast<unsigned char>(text[i]) & kLeadMask[n];
    for (size_t k = 1; k < n; ++k)
        c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    return n;
}

uint8_t combining_class(char32_t c) {
    const auto it = std::lower_bound(std::begin(kCombiningClasses), std::end(kCombiningClasses), c,
                                     [](const CombiningClass& e, char32_t v) { return e.code_point < v; });
    return it != std::end(kCombiningClasses) && it->code_point == c ? it->value : 0;
}

template <size_t N>
bool in_ranges(const CodePointRange (&ranges)[N], char32_t c) {
    const auto it = std::upper_bound(std::begin(ranges), std::end(ranges), c,
                                     [](char32_t v, const CodePointRange& r) { return v < r.first; });
    return it != std::begin(ranges) && c <= std::prev(it)->last;
}

template <size_t N>
const Decomposition* find_decomposition(const Decomposition (&table)[N], char32_t c) {
    const auto it = std::lower_bound(std::begin(table), std::end(table), c,
                                     [](const Decomposition& e, char32_t v) { return e.code_point < v; });
    return it != std::end(table) && it->code_point == c ? it : nullptr;
}

void decompose(char32_t c, Form form, std::vector<char32_t>& out) {
    if (c >= kSBase && c < kSBase + kSCount) {
        const char32_t s = c - kSBase;
        out.push_back(kLBase + s / kNCount);
        out.push_back(kVBase + (s % kNCount) / kTCount);
        if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
        return;
    }
    const Decomposition* d = form == Form::kNfc ? find_decomposition(kCanonicalDecompositions, c)
                                                : find_decomposition(kCompatibilityDecompositions, c);
    if (d == nullptr) {
        out.push_back(c);
        return;
    }
    out.insert(out.end(), kDecompositionData + d->offset, kDecompositionData + d->offset + d->length);
}

// Each run of code points with a non-zero class sorted by class, stably (the canonical ordering algorithm).
void reorder(std::vector<char32_t>& cps) {
    size_t i = 0;
    while (i < cps.size()) {
        if (combining_class(cps[i]) == 0) {
            ++i;
            continue;
        }
        size_t end = i;
        while (end < cps.size() && combining_class(cps[end]) != 0)
            ++end;
        std::stable_sort(cps.begin() + static_cast<std::ptrdiff_t>(i),
                         cps.begin() + static_cast<std::ptrdiff_t>(end),
                         [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
        i = end;
    }
}

// The primary composite of a pair, or 0.
char32_t compose_pair(char32_t first, char32_t second) {
    if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount)
        return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
    if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 && second > kTBase &&
        second < kTBase + kTCount)
        return first + (second - kTBase);
    const Composition key{first, second, 0};
    const auto it = std::lower_bound(std::begin(kCompositions), std::end(kCompositions), key,
                                     [](const Composition& a, const Composition& b) {
                                         return a.first != b.first ? a.first < b.first : a.second < b.second;
                                     });
    return it != std::end(kCompositions) && it->first == first && it->second == second ? it->composite : 0;
}

// Canonical composition: a code point joins the last starter when nothing between them blocks it (a
// starter, or a mark of the same or a higher class).
std::vector<char32_t> compose(const std::vector<char32_t>& cps) {
    std::vector<char32_t> out;
    out.reserve(cps.size());
    size_t starter = SIZE_MAX;
    uint8_t last_class = 0;  // of the last code point kept after the starter
    for (char32_t c : cps) {
        const uint8_t cc = combining_class(c);
        if (starter != SIZE_MAX) {
            const bool adjacent = out.size() - 1 == starter;
            if (adjacent || (last_class != 0 && last_class < cc)) {
                if (const char32_t composite = compose_pair(out[starter], c)) {
                    out[starter] = composite;
                    continue;
                }
            }
        }
        if (cc == 0) starter = out.size();
        last_class = cc;
        out.push_back(c);
    }
    return out;
}

// Every code point's quick check is Yes and none is a combining mark: the text is in the form already.
bool quick_check_yes(std::string_view text, Form form) {
    size_t i = 0;
    while (i < text.size()) {
        const auto lead = static_cast<unsigned char>(text[i]);
        if (lead < 0x80) {
            ++i;
            continue;
        }
        char32_t c = 0;
        const size_t n = next_code_point(text, i, c);
        if (n == 0) return true;  // not UTF-8: left as it is
        i += n;
        if (combining_class(c) != 0) return false;
        if (form == Form::kNfc ? in_ranges(kNfcQuickCheckNotYes, c) : in_ranges(kNfkcQuickCheckNotYes, c))
            return false;
    }
    return true;
}

std::string normalize(std::string_view text, Form form) {
    if (quick_check_yes(text, form)) return std::string(text);
    std::vector<char32_t> decomposed;
    decomposed.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        char32_t c = 0;
        const size_t n = next_code_point(text, i, c);
        if (n == 0) return std::string(text);
        decompose(c, form, decomposed);
        i += n;
    }
    reorder(decomposed);
    std::string out;
    out.reserve(text.size() + 8);
    for (char32_t c : compose(decomposed))
        append_utf8(out, c);
    return out;
}

}  // namespace

const char* unicode_version() {
    return kUnicodeVersion;
}

std::string to_nfc(std::string_view text) {
    return normalize(text, Form::kNfc);
}

std::string to_nfkc(std::string_view text) {
    return normalize(text, Form::kNfkc);
}

}  // namespace slipway::tokenizer
