// Tests of the text-level pieces of data preparation: XXH64 (reference vectors, streaming), whitespace
// normalization and dedup hashing, and paragraph detection.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "data/boundaries.h"
#include "data/dedup.h"
#include "data/hash.h"

namespace slipway::data {
namespace {

TEST(Xxh64, MatchesReferenceVectors) {
    EXPECT_EQ(xxh64(""), 0xEF46DB3751D8E999ull);
    EXPECT_EQ(xxh64("a"), 0xD24EC4F1A98C6E5Bull);
    EXPECT_EQ(xxh64("abc"), 0x44BC2CF5AD770999ull);
    EXPECT_EQ(xxh64("Nobody inspects the spammish repetition"), 0xFBCEA83C8A378BF1ull);  // >= 32 bytes
}

TEST(Xxh64, StreamingEqualsOneShotForAnyChunking) {
    std::mt19937_64 rng(7);
    for (size_t size : {0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 65, 100, 1000}) {
        std::string data(size, '\0');
        for (char& c : data)
            c = static_cast<char>(rng());
        for (int trial = 0; trial < 5; ++trial) {
            Xxh64Stream stream(123);
            size_t at = 0;
            while (at < size) {
                const size_t take = std::min<size_t>(size - at, rng() % 40);
                stream.update(data.data() + at, take);
                at += take;
            }
            EXPECT_EQ(stream.digest(), xxh64(data, 123)) << "size " << size;
        }
    }
}

TEST(Xxh64, HexIsSixteenLowerCaseDigits) {
    EXPECT_EQ(hex64(0xEF46DB3751D8E999ull), "ef46db3751d8e999");
    EXPECT_EQ(hex64(1), "0000000000000001");
}

TEST(Dedup, NormalizesWhitespaceOnly) {
    EXPECT_EQ(normalize_whitespace("  a \n\t b  \r\n"), "a b");
    EXPECT_EQ(normalize_whitespace("a\n\nb"), "a b");
    EXPECT_EQ(normalize_whitespace(""), "");
    EXPECT_EQ(normalize_whitespace(" \n "), "");
    EXPECT_EQ(normalize_whitespace("Привет,\u00a0мир"), "Привет,\u00a0мир");  // NBSP is not ASCII whitespace
    EXPECT_EQ(document_hash(" Hello   world\n"), document_hash("Hello world"));
    EXPECT_NE(document_hash("Hello world"), document_hash("hello world"));
}

TEST(Dedup, FilterKeepsTheFirstOccurrence) {
    DuplicateFilter filter;
    EXPECT_TRUE(filter.keep(1));
    EXPECT_TRUE(filter.keep(2));
    EXPECT_FALSE(filter.keep(1));
    EXPECT_FALSE(filter.keep(1));
    EXPECT_TRUE(filter.keep(3));
    EXPECT_EQ(filter.removed(), 2u);
}

TEST(Boundaries, SplitModeNames) {
    for (const char* name : {"document", "paragraph", "concat"}) {
        ASSERT_TRUE(parse_split_mode(name).has_value());
        EXPECT_STREQ(split_mode_name(*parse_split_mode(name)), name);
    }
    EXPECT_FALSE(parse_split_mode("sentence").has_value());
}

TEST(Boundaries, ParagraphStartsAfterABlankLine) {
    using V = std::vector<size_t>;
    EXPECT_EQ(paragraph_starts("one paragraph"), V({0}));
    EXPECT_EQ(paragraph_starts("a\nb"), V({0}));  // a line break is not a paragraph
    EXPECT_EQ(paragraph_starts("a\n\nb"), V({0, 3}));
    EXPECT_EQ(paragraph_starts("a\n  \n\tb"), V({0, 6}));  // whitespace-only line, indented text
    EXPECT_EQ(paragraph_starts("a\r\n\r\nb"), V({0, 5}));
    EXPECT_EQ(paragraph_starts("a\n\n\n\nb\n\nc"), V({0, 5, 8}));
    EXPECT_EQ(paragraph_starts("\n\nleading blank"), V({0}));  // nothing before it: no second paragraph
    EXPECT_EQ(paragraph_starts("trailing\n\n"), V({0}));
    EXPECT_EQ(paragraph_starts(""), V({0}));
}

TEST(Boundaries, PiecesConcatenateBackToTheText) {
    const std::string text = "First line\nstill first.\n\nSecond\n \n Third\n\n";
    const std::vector<size_t> starts = paragraph_starts(text);
    ASSERT_EQ(starts.size(), 3u);
    std::string joined;
    for (size_t i = 0; i < starts.size(); ++i) {
        const size_t end = i + 1 < starts.size() ? starts[i + 1] : text.size();
        joined += text.substr(starts[i], end - starts[i]);
    }
    EXPECT_EQ(joined, text);
    EXPECT_EQ(text.substr(starts[1], 6), "Second");
    EXPECT_EQ(text.substr(starts[2]), "Third\n\n");
}

}  // namespace
}  // namespace slipway::data
