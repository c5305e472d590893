// Writes engine/tokenizer/unicode_tables.inc, the data of the engine's own NFC / NFKC (normalization.cpp),
// from this machine's ICU: canonical combining classes, the full canonical (NFD) and compatibility (NFKD)
// decomposition of every code point that has one, the primary composites, and the code points whose NFC /
// NFKC quick check is not Yes. The engine then needs no ICU where it is built (a cluster's image rarely has
// its headers); ICU stays the reference its tests compare with on every code point.
//   make_unicode_tables OUT.inc
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/uversion.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr char32_t kLastCodePoint = 0x10FFFF;
constexpr char32_t kHangulFirst = 0xAC00, kHangulLast = 0xD7A3;  // composed algorithmically

bool is_surrogate(char32_t c) {
    return c >= 0xD800 && c <= 0xDFFF;
}

std::vector<char32_t> to_code_points(const UChar* s, int32_t n) {
    std::vector<char32_t> out;
    for (int32_t i = 0; i < n;) {
        UChar32 c;
        U16_NEXT(s, i, n, c);
        out.push_back(static_cast<char32_t>(c));
    }
    return out;
}

// The code point normalized by `normalizer`, as code points.
std::vector<char32_t> normalized(const UNormalizer2* normalizer, char32_t c) {
    UChar in[2], out[64];
    int32_t n = 0;
    U16_APPEND_UNSAFE(in, n, static_cast<UChar32>(c));
    UErrorCode status = U_ZERO_ERROR;
    const int32_t m = unorm2_normalize(normalizer, in, n, out, 64, &status);
    if (U_FAILURE(status)) {
        std::cerr << "ICU failed on U+" << std::hex << static_cast<uint32_t>(c) << "\n";
        std::exit(1);
    }
    return to_code_points(out, m);
}

struct Decomposition {
    char32_t code_point;
    std::vector<char32_t> into;
};

std::string hex(char32_t c) {
    char text[16];
    std::snprintf(text, sizeof(text), "0x%X", static_cast<unsigned>(c));
    return text;
}

// {first, last} ranges of the code points `in` says are in.
template <typename Pred>
std::vector<std::pair<char32_t, char32_t>> ranges(Pred in) {
    std::vector<std::pair<char32_t, char32_t>> out;
    for (char32_t c = 0; c <= kLastCodePoint; ++c) {
        if (!in(c)) continue;
        if (!out.empty() && out.back().second + 1 == c) {
            out.back().second = c;
        } else {
            out.push_back({c, c});
        }
    }
    return out;
}

void write_decompositions(std::ostream& out, const char* name, const std::vector<Decomposition>& table,
                          std::vector<char32_t>& data) {
    out << "inline constexpr Decomposition " << name << "[] = {\n";
    int column = 0;
    for (const Decomposition& d : table) {
        out << "{" << hex(d.code_point) << "," << data.size() << "," << d.into.size() << "},";
        data.insert(data.end(), d.into.begin(), d.into.end());
        if (++column % 6 == 0) out << "\n";
    }
    out << "};\n";
}

void write_ranges(std::ostream& out, const char* name, const std::vector<std::pair<char32_t, char32_t>>& r) {
    out << "inline constexpr CodePointRange " << name << "[] = {\n";
    for (size_t i = 0; i < r.size(); ++i)
        out << "{" << hex(r[i].first) << "," << hex(r[i].second) << "}," << ((i + 1) % 8 == 0 ? "\n" : "");
    out << "};\n";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: make_unicode_tables OUT.inc\n";
        return 2;
    }
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* nfd = unorm2_getNFDInstance(&status);
    const UNormalizer2* nfkd = unorm2_getNFKDInstance(&status);
    const UNormalizer2* nfc = unorm2_getNFCInstance(&status);
    if (U_FAILURE(status)) {
        std::cerr << "ICU: " << u_errorName(status) << "\n";
        return 1;
    }
    std::vector<std::pair<char32_t, int>> classes;
    std::vector<Decomposition> canonical, compatibility;
    std::vector<std::array<char32_t, 3>> compositions;
    for (char32_t c = 0; c <= kLastCodePoint; ++c) {
        if (is_surrogate(c)) continue;
        if (const int cc = u_getCombiningClass(static_cast<UChar32>(c)); cc != 0) classes.push_back({c, cc});
        if (c >= kHangulFirst && c <= kHangulLast) continue;
        if (std::vector<char32_t> d = normalized(nfd, c); d != std::vector<char32_t>{c})
            canonical.push_back({c, std::move(d)});
        if (std::vector<char32_t> d = normalized(nfkd, c); d != std::vector<char32_t>{c})
            compatibility.push_back({c, std::move(d)});
        UChar raw[8];
        status = U_ZERO_ERROR;
        const int32_t n = unorm2_getRawDecomposition(nfc, static_cast<UChar32>(c), raw, 8, &status);
        if (U_FAILURE(status) || n <= 0) continue;
        const std::vector<char32_t> pair = to_code_points(raw, n);
        if (pair.size() == 2 && unorm2_composePair(nfc, static_cast<UChar32>(pair[0]),
                                                   static_cast<UChar32>(pair[1])) == static_cast<UChar32>(c))
            compositions.push_back({pair[0], pair[1], c});
    }
    std::sort(compositions.begin(), compositions.end());
    const auto not_yes = [](UProperty property) {
        return ranges([property](char32_t c) {
            return !is_surrogate(c) && u_getIntPropertyValue(static_cast<UChar32>(c), property) != UNORM_YES;
        });
    };
    UVersionInfo unicode;
    u_getUnicodeVersion(unicode);
    char version[U_MAX_VERSION_STRING_LENGTH];
    u_versionToString(unicode, version);

    std::ofstream out(argv[1]);
    out << "// Generated by engine/tokenizer/tools/make_unicode_tables.cpp from ICU " << U_ICU_VERSION
        << " (Unicode " << version << "): do not edit.\n"
        << "// clang-format off\n"
        << "inline constexpr const char* kUnicodeVersion = \"" << version << "\";\n"
        << "inline constexpr CombiningClass kCombiningClasses[] = {\n";
    for (size_t i = 0; i < classes.size(); ++i)
        out << "{" << hex(classes[i].first) << "," << classes[i].second << "},"
            << ((i + 1) % 8 == 0 ? "\n" : "");
    out << "};\n";
    std::vector<char32_t> data;
    write_decompositions(out, "kCanonicalDecompositions", canonical, data);
    write_decompositions(out, "kCompatibilityDecompositions", compatibility, data);
    out << "inline constexpr char32_t kDecompositionData[] = {\n";
    for (size_t i = 0; i < data.size(); ++i)
        out << hex(data[i]) << "," << ((i + 1) % 12 == 0 ? "\n" : "");
    out << "};\n";
    out << "inline constexpr Composition kCompositions[] = {\n";
    for (size_t i = 0; i < compositions.size(); ++i) {
        out << "{" << hex(compositions[i][0]) << "," << hex(compositions[i][1]) << ","
            << hex(compositions[i][2]) << "}," << ((i + 1) % 5 == 0 ? "\n" : "");
    }
    out << "};\n";
    write_ranges(out, "kNfcQuickCheckNotYes", not_yes(UCHAR_NFC_QUICK_CHECK));
    write_ranges(out, "kNfkcQuickCheckNotYes", not_yes(UCHAR_NFKC_QUICK_CHECK));
    out << "// clang-format on\n";
    std::cout << "wrote " << argv[1] << ": Unicode " << version << ", " << classes.size()
              << " combining classes, " << canonical.size() << " canonical and " << compatibility.size()
              << " compatibility decompositions, " << compositions.size() << " compositions\n";
    return out ? 0 : 1;
}
