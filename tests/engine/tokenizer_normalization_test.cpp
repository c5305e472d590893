// The engine's own NFC / NFKC (tokenizer/normalization.cpp) against ICU, the reference its tables were made
// from: every code point alone, then random sequences built to exercise what single code points do not
// (canonical reordering of marks, blocked and unblocked composition, Hangul L V T, singletons, expansions).
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/uversion.h>

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tokenizer/unicode.h"

namespace slipway::tokenizer {
namespace {

std::string icu_normalize(const UNormalizer2* normalizer, const std::string& text) {
    UErrorCode status = U_ZERO_ERROR;
    std::vector<UChar> utf16(text.size() * 2 + 4);
    int32_t n = 0;
    u_strFromUTF8(utf16.data(), static_cast<int32_t>(utf16.size()), &n, text.data(),
                  static_cast<int32_t>(text.size()), &status);
    std::vector<UChar> normalized(static_cast<size_t>(n) * 18 + 16);
    const int32_t m = unorm2_normalize(normalizer, utf16.data(), n, normalized.data(),
                                       static_cast<int32_t>(normalized.size()), &status);
    std::string out(static_cast<size_t>(m) * 3 + 4, '\0');
    int32_t length = 0;
    u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &length, normalized.data(), m, &status);
    EXPECT_TRUE(U_SUCCESS(status)) << u_errorName(status);
    out.resize(static_cast<size_t>(length));
    return out;
}

std::string utf8(const std::vector<char32_t>& cps) {
    std::string out;
    for (char32_t c : cps)
        append_utf8(out, c);
    return out;
}

class Normalization : public testing::Test {
protected:
    void SetUp() override {
        UVersionInfo unicode;
        u_getUnicodeVersion(unicode);
        char version[U_MAX_VERSION_STRING_LENGTH];
        u_versionToString(unicode, version);
        // Another Unicode version's ICU (a newer Debian root) assigns other code points.
        if (std::string(version) != unicode_version())
            GTEST_SKIP() << "ICU here is Unicode " << version << ", the tables are " << unicode_version();
        UErrorCode status = U_ZERO_ERROR;
        nfc_ = unorm2_getNFCInstance(&status);
        nfkc_ = unorm2_getNFKCInstance(&status);
        ASSERT_TRUE(U_SUCCESS(status));
    }

    const UNormalizer2* nfc_ = nullptr;
    const UNormalizer2* nfkc_ = nullptr;
};

TEST_F(Normalization, EveryCodePointEqualsIcu) {
    size_t nfc_changed = 0, nfkc_changed = 0, failures = 0;
    for (char32_t c = 1; c <= 0x10FFFF && failures < 20; ++c) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        const std::string text = utf8({c});
        const std::string nfc = to_nfc(text), nfkc = to_nfkc(text);
        const std::string want_nfc = icu_normalize(nfc_, text), want_nfkc = icu_normalize(nfkc_, text);
        nfc_changed += want_nfc != text;
        nfkc_changed += want_nfkc != text;
        if (nfc != want_nfc || nfkc != want_nfkc) {
            ++failures;
            ADD_FAILURE() << "U+" << std::hex << static_cast<uint32_t>(c);
        }
    }
    // Not a vacuous pass: the forms do change that many code points.
    EXPECT_GT(nfc_changed, 1000u);
    EXPECT_GT(nfkc_changed, 4500u);
}

// Sequences from a pool of the code points that interact: marks of several classes, bases they compose with,
// Hangul jamo and syllables, singletons, compatibility expansions.
TEST_F(Normalization, RandomSequencesEqualIcu) {
    std::vector<char32_t> pool = {
        'a',    'e',    'o',     'A',     0x438,   0x418,  0x435,  0x3B1,  0x3C9,  0x1100, 0x1161, 0x11A8,
        0xAC00, 0xAC01, 0xD7A3,  0x212B,  0x2126,  0xFB01, 0x1E9B, 0x1E0B, 0x1EA0, 0x0F73, 0x0F75, 0x0F81,
        0x0344, 0x0958, 0x09C7,  0x09BE,  0x09D7,  0x0B47, 0x0B3E, 0x0B56, 0x3099, 0x309A, 0x304B, 0x30AB,
        0xFF76, 0xFF9E, 0x00C5,  0x00E9,  0x0419,  0x0439, 0x1F80, 0x1FB6, 0x2460, 0x32A4, 0x3392, 0xFDFA,
        0x0020, 0x00A0, 0x1D15E, 0x1D165, 0x1D16E, 0x05D0, 0x05B7, 0x05BC};
    for (char32_t mark = 0x300; mark <= 0x36F; ++mark)
        pool.push_back(mark);
    pool.insert(pool.end(), {0x0591, 0x05B0, 0x0650, 0x0670, 0x093C, 0x094D, 0x1AB0, 0x20D0, 0x302A, 0xFE20});
    std::mt19937 rng(7);
    std::uniform_int_distribution<size_t> pick(0, pool.size() - 1), length(1, 9);
    size_t changed = 0;
    for (int i = 0; i < 40000; ++i) {
        std::vector<char32_t> cps(length(rng));
        for (char32_t& c : cps)
            c = pool[pick(rng)];
        const std::string text = utf8(cps);
        const std::string want_nfc = icu_normalize(nfc_, text);
        changed += want_nfc != text;
        ASSERT_EQ(to_nfc(text), want_nfc) << "NFC of sequence " << i;
        ASSERT_EQ(to_nfkc(text), icu_normalize(nfkc_, text)) << "NFKC of sequence " << i;
    }
    EXPECT_GT(changed, 20000u);
}

TEST_F(Normalization, TextThatIsNotUtf8IsLeftAsItIs) {
    const std::string bad = "e\xCC\x81\xFF";
    EXPECT_EQ(to_nfc(bad), bad);
    EXPECT_EQ(to_nfc("e\xCC\x81"), "\xC3\xA9");  // e + U+0301 -> é
}

}  // namespace
}  // namespace slipway::tokenizer
