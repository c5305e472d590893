// Unit tests of the tokenizer components on small hand-made tokenizer.json documents: BPE merge order,
// byte fallback and unknown fusing, ignore_merges, added tokens, split behaviours, decoders, UTF-8
// helpers, errors that name the unsupported component, and the special tokens around a text.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/regex.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer_test_json.h"

namespace slipway::tokenizer {
namespace {

// A SentencePiece-style tokenizer (Llama-2 layout) over a tiny vocab.
nlohmann::json sentencepiece_json() {
    return sentencepiece_bpe_json({"▁", "a", "b", "c", "ab", "▁ab", "abc", "▁a"},
                                  {"a b", "▁ ab", "ab c", "▁ a"});
}

Tokenizer load(const nlohmann::json& json) {
    Result<Tokenizer> t = Tokenizer::from_json(json);
    EXPECT_TRUE(t.ok()) << t.error();
    return std::move(*t);
}

// A byte-level BPE over the GPT-2 alphabet with "he", "hel" and "hello" (reachable only through
// ignore_merges: no merge builds it), merges given as pairs.
nlohmann::json byte_level_json() {
    const ByteLevelAlphabet& a = byte_level_alphabet();
    nlohmann::json vocab;
    for (int b = 0; b < 256; ++b)
        vocab[a.byte_to_utf8[static_cast<size_t>(b)]] = b;
    vocab["he"] = 256;
    vocab["hel"] = 257;
    vocab["hello"] = 258;
    return {{"pre_tokenizer",
             {{"type", "Sequence"},
              {"pretokenizers",
               {{{"type", "Split"},
                 {"pattern", {{"Regex", "\\s+|\\S+"}}},
                 {"behavior", "Isolated"},
                 {"invert", false}},
                {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
            {"decoder", {{"type", "ByteLevel"}}},
            {"model",
             {{"type", "BPE"},
              {"ignore_merges", true},
              {"vocab", vocab},
              {"merges", nlohmann::json::array(
                             {nlohmann::json::array({"h", "e"}), nlohmann::json::array({"he", "l"})})}}}};
}

TEST(Tokenizer, MergesByRankNotByPosition) {
    const Tokenizer t = load(sentencepiece_json());
    // "▁abc": a+b (rank 0) first, then ▁+ab (rank 1) beats ab+c (rank 2).
    EXPECT_EQ(t.encode("abc"), (std::vector<int32_t>{8, 6}));
    EXPECT_EQ(t.encode("abc", true), (std::vector<int32_t>{1, 8, 6}));
}

TEST(Tokenizer, ByteFallbackForUnknownCharacters) {
    const Tokenizer t = load(sentencepiece_json());
    // "é" is U+00E9 = C3 A9 -> <0xC3> <0xA9>.
    EXPECT_EQ(t.encode("é"), (std::vector<int32_t>{3, 11 + 0xC3, 11 + 0xA9}));
    EXPECT_EQ(*t.decode(t.encode("é ab")), "é ab");
}

TEST(Tokenizer, SpecialTokensInTextAreMatchedBeforeTheModel) {
    const Tokenizer t = load(sentencepiece_json());
    // Each piece around a special token gets its own "▁" from the Prepend normalizer.
    EXPECT_EQ(t.encode("a</s>a"), (std::vector<int32_t>{10, 2, 10}));
    EXPECT_EQ(*t.decode({10, 2, 10}), "a</s> a");
    EXPECT_EQ(*t.decode({10, 2, 10}, true), "a a");
}

TEST(Tokenizer, FuseUnkWithoutByteFallback) {
    nlohmann::json json = sentencepiece_json();
    json["model"]["byte_fallback"] = false;
    const Tokenizer t = load(json);
    EXPECT_EQ(t.encode("éé a"), (std::vector<int32_t>{3, 0, 10}));  // ▁, one fused <unk>, ▁a
}

TEST(Tokenizer, InvalidIdsAndUtf8AreErrors) {
    const Tokenizer t = load(sentencepiece_json());
    EXPECT_FALSE(t.decode({99999}).ok());
    EXPECT_EQ(t.decode({99999}).error(), "unknown token id 99999");
    EXPECT_FALSE(t.encode_checked("\xff\xfe").ok());
}

TEST(Tokenizer, UnsupportedComponentsAreNamed) {
    nlohmann::json json = sentencepiece_json();
    json["normalizer"] = {{"type", "NFKD"}};
    EXPECT_EQ(Tokenizer::from_json(json).error(), "normalizer \"NFKD\" is not supported");
    json = sentencepiece_json();
    json["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
    EXPECT_EQ(Tokenizer::from_json(json).error(), "pre_tokenizer \"BertPreTokenizer\" is not supported");
    json = sentencepiece_json();
    json["model"]["type"] = "WordPiece";
    EXPECT_EQ(Tokenizer::from_json(json).error(),
              "model \"WordPiece\" is not supported (only BPE and Unigram)");
    json = sentencepiece_json();
    json["decoder"] = {{"type", "WordPiece"}};
    EXPECT_EQ(Tokenizer::from_json(json).error(), "decoder \"WordPiece\" is not supported");
    json = sentencepiece_json();
    json["post_processor"] = {{"type", "BertProcessing"}};
    EXPECT_EQ(
        Tokenizer::from_json(json).error(),
        "post_processor \"BertProcessing\" is not supported (TemplateProcessing, ByteLevel, or a Sequence "
        "of them)");
    json = sentencepiece_json();
    json["model"]["merges"].push_back("a zz");
    EXPECT_EQ(Tokenizer::from_json(json).error(),
              "model.merges[4]: \"a zz\" uses a token missing from the vocab");
}

// The special tokens around a text (special_tokens.h): tokenizer_config.json, else the post-processor, else
// the convention; each decision says where it came from.
TEST(SpecialTokens, TheTemplateAddsItsBosInsideASequenceToo) {
    nlohmann::json json = sentencepiece_json();
    Tokenizer t = load(json);
    EXPECT_EQ(t.special_tokens().prefix, (std::vector<int32_t>{1}));
    EXPECT_TRUE(t.special_tokens().suffix.empty());
    EXPECT_EQ(t.special_tokens().prefix_source, "post_processor TemplateProcessing");
    // Meta's Llama 3 layout: ByteLevel, then the template.
    const nlohmann::json single_template = json["post_processor"];
    json["post_processor"] = {
        {"type", "Sequence"},
        {"processors", {{{"type", "ByteLevel"}, {"trim_offsets", false}}, single_template}}};
    t = load(json);
    EXPECT_EQ(t.encode("abc", true), (std::vector<int32_t>{1, 8, 6}));
    EXPECT_EQ(t.special_tokens().prefix_source, "post_processor TemplateProcessing");
}

TEST(SpecialTokens, TokenizerConfigFlagsDecideOverTheTemplate) {
    const nlohmann::json json = sentencepiece_json();
    nlohmann::json config = {{"add_bos_token", false},
                             {"add_eos_token", true},
                             {"bos_token", "<s>"},
                             {"eos_token", {{"content", "</s>"}, {"special", true}}}};
    Result<Tokenizer> t = Tokenizer::from_json(json, &config);
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(t->encode("abc", true), (std::vector<int32_t>{8, 6, 2}));
    EXPECT_EQ(t->special_tokens().prefix_source, "tokenizer_config.json add_bos_token");
    EXPECT_EQ(t->special_tokens().suffix_source, "tokenizer_config.json add_eos_token");
    // The BOS is still the tokenizer's, though not added: lm-eval predicts a text's first token from it.
    EXPECT_EQ(t->special_tokens().bos_id, std::optional<int32_t>(1));
    EXPECT_EQ(t->special_tokens().eos_id, std::optional<int32_t>(2));
    // add_bos_token true without a bos_token: the token the template places.
    config = {{"add_bos_token", true}};
    t = Tokenizer::from_json(json, &config);
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(t->encode("abc", true), (std::vector<int32_t>{1, 8, 6}));
    config = {{"add_bos_token", true}, {"bos_token", "<bos>"}};
    EXPECT_EQ(Tokenizer::from_json(json, &config).error(),
              "tokenizer_config.json: bos_token \"<bos>\" is no token of tokenizer.json");
    config = {{"add_eos_token", true}};
    EXPECT_EQ(
        Tokenizer::from_json(json, &config).error(),
        "tokenizer_config.json: add_eos_token is true but there is no eos_token, nor one in tokenizer.json's "
        "post_processor");
}

TEST(SpecialTokens, WithoutEitherTheConventionOfTheKindDecides) {
    nlohmann::json json = sentencepiece_json();
    json.erase("post_processor");
    Tokenizer t = load(json);  // byte fallback: SentencePiece-style, which adds <s>
    EXPECT_EQ(t.encode("abc", true), (std::vector<int32_t>{1, 8, 6}));
    EXPECT_EQ(t.special_tokens().prefix_source.rfind("convention: SentencePiece-style", 0), 0u)
        << t.special_tokens().prefix_source;
    EXPECT_EQ(t.special_tokens().suffix_source.rfind("convention: ", 0), 0u);
    json["model"]["byte_fallback"] = false;
    t = load(json);  // still SentencePiece-style: the Prepend("▁") normalizer
    EXPECT_EQ(t.encode("abc", true), (std::vector<int32_t>{1, 8, 6}));
    // A byte-level BPE without a post-processor adds nothing, whatever tokenizer_config.json says of others.
    json = byte_level_json();
    nlohmann::json config = {{"bos_token", "he"}, {"chat_template", "{{ messages }}"}};
    Result<Tokenizer> byte_level = Tokenizer::from_json(json, &config);
    ASSERT_TRUE(byte_level.ok()) << byte_level.error();
    EXPECT_EQ(byte_level->encode("hel", true), (std::vector<int32_t>{257}));
    EXPECT_EQ(
        byte_level->special_tokens().prefix_source,
        "convention: a tokenizer that is not SentencePiece-style (byte-level BPE: GPT-2, Llama 3, Qwen) adds "
        "no BOS");
    EXPECT_EQ(byte_level->special_tokens().bos_id, byte_level->token_to_id("he"));  // named, not added
    EXPECT_FALSE(byte_level->special_tokens().eos_id.has_value());
}

TEST(SpecialTokens, FromFileReadsTheTokenizerConfigBesideIt) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("slipway-special-tokens-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "tokenizer.json") << sentencepiece_json().dump();
    Result<Tokenizer> t = Tokenizer::from_file((dir / "tokenizer.json").string());
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(t->encode("abc", true), (std::vector<int32_t>{1, 8, 6}));
    std::ofstream(dir / "tokenizer_config.json") << R"({"add_bos_token": false})";
    t = Tokenizer::from_file((dir / "tokenizer.json").string());
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(t->encode("abc", true), (std::vector<int32_t>{8, 6}));
    std::ofstream(dir / "tokenizer_config.json") << "[1, 2]";
    EXPECT_EQ(Tokenizer::from_file((dir / "tokenizer.json").string()).error(),
              (dir / "tokenizer_config.json").string() + ": expected a JSON object");
    std::filesystem::remove_all(dir);
}

TEST(Tokenizer, MissingFileIsNamed) {
    EXPECT_EQ(Tokenizer::from_file("/nonexistent/tokenizer.json").error(),
              "/nonexistent/tokenizer.json: cannot open file");
}

// Byte-level: the GPT-2 alphabet, ignore_merges, and merges given as pairs.
TEST(Tokenizer, ByteLevelWithIgnoreMerges) {
    const ByteLevelAlphabet& a = byte_level_alphabet();
    EXPECT_EQ(a.byte_to_utf8[' '], "Ġ");
    EXPECT_EQ(a.byte_to_utf8['\n'], "Ċ");
    EXPECT_EQ(a.byte_to_utf8['A'], "A");
    nlohmann::json json = byte_level_json();
    Tokenizer t = load(json);
    EXPECT_EQ(t.encode("hello help"), (std::vector<int32_t>{258, ' ', 257, 'p'}));
    EXPECT_EQ(*t.decode(t.encode("hello help ✓")), "hello help ✓");
    json["model"]["ignore_merges"] = false;
    t = load(json);
    EXPECT_EQ(t.encode("hello"), (std::vector<int32_t>{257, 'l', 'o'}));
}

TEST(PreTokenizer, SplitBehaviours) {
    // "a,b,,c" split on ","
    const std::vector<std::pair<size_t, size_t>> matches = {{1, 2}, {3, 4}, {4, 5}};
    using R = std::vector<std::pair<size_t, size_t>>;
    EXPECT_EQ(split_by_matches(6, matches, SplitBehavior::kIsolated, false),
              (R{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}}));
    EXPECT_EQ(split_by_matches(6, matches, SplitBehavior::kRemoved, false), (R{{0, 1}, {2, 3}, {5, 6}}));
    EXPECT_EQ(split_by_matches(6, matches, SplitBehavior::kMergedWithPrevious, false),
              (R{{0, 2}, {2, 4}, {4, 5}, {5, 6}}));
    EXPECT_EQ(split_by_matches(6, matches, SplitBehavior::kMergedWithNext, false),
              (R{{0, 1}, {1, 3}, {3, 4}, {4, 6}}));
    EXPECT_EQ(split_by_matches(6, matches, SplitBehavior::kContiguous, false),
              (R{{0, 1}, {1, 2}, {2, 3}, {3, 5}, {5, 6}}));
}

TEST(Regex, OnigurumaWhitespaceIncludesNextLine) {
    const auto regex = Regex::compile("\\s+");
    ASSERT_TRUE(regex.ok());
    std::vector<std::pair<size_t, size_t>> m;
    ASSERT_TRUE((*regex)
                    ->find_all("a\xC2\x85"
                               "b",
                               m)
                    .ok());  // U+0085 NEL is \s in Oniguruma, not in PCRE2
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0], std::make_pair(size_t{1}, size_t{3}));
    EXPECT_EQ(oniguruma_compatible("[^\\s\\p{L}]"),
              "[^\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{"
              "202F}\\x{205F}"
              "\\x{3000}\\p{L}]");
    EXPECT_FALSE(Regex::compile("(unclosed").ok());
}

TEST(Unicode, ValidationAndLossyDecoding) {
    EXPECT_TRUE(is_valid_utf8("héllo ✓ 😀"));
    EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong
    EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate
    EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // > U+10FFFF
    EXPECT_FALSE(is_valid_utf8("\xE2\x9C"));          // truncated
    EXPECT_EQ(utf8_lossy("a\xE2\x9C"
                         "b"),
              "a\xEF\xBF\xBD"
              "b");  // one U+FFFD for the maximal subpart
    EXPECT_EQ(utf8_lossy("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");
    EXPECT_EQ(to_nfc("e\xCC\x81"), "\xC3\xA9");  // e + combining acute -> é
    EXPECT_EQ(to_nfc("plain"), "plain");
}

}  // namespace
}  // namespace slipway::tokenizer
