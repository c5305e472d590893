// lm-eval's arithmetic (eval/metrics.h) on hand-computed cases.
#include "eval/metrics.h"

#include <cmath>

#include <gtest/gtest.h>

namespace slipway::eval {
namespace {

TEST(PickChoiceTest, AccIsTheArgmaxOfTheSummedLogLikelihoods) {
    const ChoicePick pick = pick_choice({-7.5, -3.25, -9.0}, {"a", "b", "c"});
    EXPECT_EQ(pick.pred, 1u);
    EXPECT_EQ(pick.pred_norm, 1u);
}

// "да" is 2 characters and 4 UTF-8 bytes, "yes" 3 of each. lls -2.0, -2.9:
//   acc: -2.0 > -2.9 -> 0;  per character: -1.0 < -0.967 -> 1;  per byte it would be -0.5 > -0.967 -> 0.
TEST(PickChoiceTest, AccNormDividesByCharactersNotBytes) {
    const ChoicePick pick = pick_choice({-2.0, -2.9}, {"да", "yes"});
    EXPECT_EQ(pick.pred, 0u);
    EXPECT_EQ(pick.pred_norm, 1u);
}

TEST(PickChoiceTest, TiesGoToTheFirstChoiceAsNumpyArgmax) {
    const ChoicePick pick = pick_choice({-4.0, -4.0, -2.0, -2.0}, {"ab", "cd", "e", "f"});
    EXPECT_EQ(pick.pred, 2u);
    // per character: -2, -2, -2, -2: all equal, the first wins
    EXPECT_EQ(pick.pred_norm, 0u);
}

TEST(CodePointCountTest, CountsPythonStringLength) {
    EXPECT_EQ(code_point_count(""), 0u);
    EXPECT_EQ(code_point_count("abc"), 3u);
    EXPECT_EQ(code_point_count("Ёжик"), 4u);
    EXPECT_EQ(code_point_count("\xF0\x9F\x98\x80!"), 2u);  // U+1F600 and "!"
}

// An encoder that makes one token per word, the word's leading space included (as byte-level BPE does),
// and one token per trailing space: ids are the token's length x 100 + its first byte.
std::vector<int32_t> word_tokens(std::string_view text) {
    std::vector<int32_t> ids;
    size_t i = 0;
    while (i < text.size()) {
        size_t j = i;
        while (j < text.size() && text[j] == ' ')
            ++j;
        if (j == text.size()) {  // trailing spaces: one token each
            for (; i < text.size(); ++i)
                ids.push_back(100 + ' ');
            break;
        }
        if (j > i + 1) {  // extra spaces before a word are tokens of their own
            for (; i + 1 < j; ++i)
                ids.push_back(100 + ' ');
        }
        size_t end = text.find(' ', j);
        if (end == std::string_view::npos) end = text.size();
        ids.push_back(static_cast<int32_t>((end - i) * 100 + static_cast<unsigned char>(text[i])));
        i = end;
    }
    return ids;
}

TEST(EncodePairTest, ContinuationIsWhatTheWholeAddsAfterTheContext) {
    const EncodedPair pair = encode_pair(word_tokens, "The cat", " sat");
    EXPECT_EQ(pair.context, word_tokens("The cat"));
    EXPECT_EQ(pair.continuation, (std::vector<int32_t>{4 * 100 + ' '}));
}

// lm-eval moves the context's trailing space into the continuation: "Q: " + "A" is encoded as "Q:" | " A",
// one token " A", not "Q: " | "A" with a lone space token in the context.
TEST(EncodePairTest, TrailingWhitespaceOfTheContextMovesToTheContinuation) {
    const EncodedPair pair = encode_pair(word_tokens, "Q: ", "A");
    EXPECT_EQ(pair.context, word_tokens("Q:"));
    EXPECT_EQ(pair.continuation, (std::vector<int32_t>{2 * 100 + ' '}));
}

// Python's rstrip() and strip() remove Unicode whitespace too (no-break space, ideographic space).
TEST(EncodePairTest, UnicodeTrailingWhitespaceMovesLikePythonsRstrip) {
    EXPECT_EQ(end_without_trailing_space("Q:\u00a0\u3000 "), 2u);
    EXPECT_EQ(end_without_trailing_space("Вопрос"), std::string("Вопрос").size());
    EXPECT_EQ(end_without_trailing_space("\u2003"), 0u);
    EXPECT_EQ(end_without_trailing_space("a\x80 "), 2u);  // an invalid byte is not whitespace
    std::vector<std::string> seen;
    const Encode record = [&seen](std::string_view text) {
        seen.emplace_back(text);
        return word_tokens(text);
    };
    (void)encode_pair(record, "Q:\u00a0", "A");
    EXPECT_EQ(seen, (std::vector<std::string>{"Q:\u00a0A", "Q:"}));  // whole, then the context alone
    EXPECT_EQ(strip_whitespace("\u3000 copy\u00a0me\n\u2028"), "copy\u00a0me");
}

TEST(StopTest, FirstStopStringWins) {
    EXPECT_EQ(first_stop("abc.def\nghi", {"\n", "."}), 3u);
    EXPECT_EQ(first_stop("abc", {"\n"}), std::string_view::npos);
    EXPECT_EQ(first_stop("abc", {}), std::string_view::npos);
}

TEST(GenerationScoreTest, ExactAndPrefixMatch) {
    EXPECT_TRUE(score_generation(" copy me \n", "copy me", true).exact_match);
    EXPECT_FALSE(score_generation(" copy me", "copy me", false).exact_match);
    const GenerationScore longer = score_generation("copy me and more", "copy me", true);
    EXPECT_FALSE(longer.exact_match);
    EXPECT_TRUE(longer.prefix_match);
    const GenerationScore shorter = score_generation("copy", "copy me", true);
    EXPECT_FALSE(shorter.exact_match);
    EXPECT_FALSE(shorter.prefix_match);
}

TEST(PerplexityTest, ExpOfTheMeanNll) {
    PerplexitySums sums{6.0, 3};
    EXPECT_DOUBLE_EQ(sums.mean_nll(), 2.0);
    EXPECT_DOUBLE_EQ(sums.perplexity(), std::exp(2.0));
}

}  // namespace
}  // namespace slipway::eval
