// Unit tests of issue 17's tokenizer parts on small hand-made inputs: the Unigram model (best path, unknown
// fusing, byte fallback), the NFKC normalizer, vocabulary extension (ids kept, added tokens after the
// model vocab, new merges applied), and the corpus measures of `tokenizer stats`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tokenizer/bpe_extender.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_stats.h"
#include "tokenizer_test_json.h"

namespace slipway::tokenizer {
namespace {

// A Unigram tokenizer as `tokenizer train --type unigram` writes them, over a tiny vocab.
nlohmann::json unigram_json(bool byte_fallback) {
    nlohmann::json vocab = nlohmann::json::array();
    for (const char* special : {"<unk>", "<s>", "</s>"})
        vocab.push_back(nlohmann::json::array({special, 0.0}));
    if (byte_fallback) {
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof(name), "<0x%02X>", b);
            vocab.push_back(nlohmann::json::array({name, 0.0}));
        }
    }
    for (const auto& [piece, score] : std::vector<std::pair<std::string, double>>{{"▁", -2.0},
                                                                                  {"a", -3.0},
                                                                                  {"b", -3.0},
                                                                                  {"ab", -4.0},
                                                                                  {"▁ab", -7.5},
                                                                                  {"▁a", -3.0},
                                                                                  {"c", -5.0},
                                                                                  {"bc", -5.5}})
        vocab.push_back(nlohmann::json::array({piece, score}));
    return {
        {"added_tokens",
         {{{"id", 0}, {"content", "<unk>"}, {"special", true}, {"normalized", false}},
          {{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}},
          {{"id", 2}, {"content", "</s>"}, {"special", true}, {"normalized", false}}}},
        {"normalizer", {{"type", "NFKC"}}},
        {"pre_tokenizer",
         {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "always"}, {"split", true}}},
        {"post_processor", nullptr},
        {"decoder", sentencepiece_decoder_json()},
        {"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}, {"byte_fallback", byte_fallback}}}};
}

Tokenizer load(const nlohmann::json& json) {
    Result<Tokenizer> t = Tokenizer::from_json(json);
    EXPECT_TRUE(t.ok()) << t.error();
    return std::move(*t);
}

std::vector<std::string> tokens_of(const Tokenizer& t, const std::string& text) {
    std::vector<std::string> out;
    for (int32_t id : t.encode(text))
        out.push_back(*t.id_to_token(id));
    return out;
}

TEST(Unigram, TakesThePathWithTheHighestTotalScore) {
    const Tokenizer t = load(unigram_json(false));
    // "▁ab": "▁"+"ab" and "▁a"+"b" both total -6 and beat "▁ab" (-7.5). On a tie the path found first
    // is kept, as in the HF library: offsets are visited in order, so the last token starting earlier wins.
    EXPECT_EQ(tokens_of(t, "ab"), (std::vector<std::string>{"▁", "ab"}));
    // "bc" (-5.5) beats "b"+"c" (-8).
    EXPECT_EQ(tokens_of(t, "abc"), (std::vector<std::string>{"▁a", "bc"}));
}

// serde_json, the HF library's JSON reader, reads -9.039228439331055 and -3.8531384468078613 one ulp away
// from the correctly rounded doubles, and "▁руки...." then ends in "..." + "." instead of "." + "..." (the
// two sums differ in the last bit). Found by the golden test on a Unigram file with 17-digit scores.
TEST(Unigram, ScoresAreReadAsTheHfLibraryReadsThem) {
    nlohmann::json json = unigram_json(false);
    for (const auto& [piece, score] :
         std::vector<std::pair<std::string, double>>{{"▁рук", -9.039228439331055},
                                                     {"и", -5.607437610626221},
                                                     {".", -3.8531384468078613},
                                                     {"...", -6.566883563995361}})
        json["model"]["vocab"].push_back(nlohmann::json::array({piece, score}));
    EXPECT_EQ(tokens_of(load(json), "руки...."), (std::vector<std::string>{"▁рук", "и", "...", "."}));
}

TEST(Unigram, UnknownCharactersFuseIntoOneUnk) {
    const Tokenizer t = load(unigram_json(false));
    EXPECT_EQ(t.encode("axyz"), (std::vector<int32_t>{*t.token_to_id("▁a"), 0}));
    EXPECT_EQ(t.encode("xay"), (std::vector<int32_t>{*t.token_to_id("▁"), 0, *t.token_to_id("a"), 0}));
}

TEST(Unigram, ByteFallbackSpellsUnknownCharactersAndDecodesBack) {
    const Tokenizer t = load(unigram_json(true));
    // "ж" is D0 B6.
    EXPECT_EQ(tokens_of(t, "aж"), (std::vector<std::string>{"▁a", "<0xD0>", "<0xB6>"}));
    EXPECT_EQ(*t.decode(t.encode("ab жc a")), "ab жc a");
    EXPECT_TRUE(t.is_byte_fallback(*t.token_to_id("<0xD0>")));
    EXPECT_FALSE(t.is_byte_fallback(*t.token_to_id("a")));
}

TEST(Unigram, NfkcNormalizes) {
    const Tokenizer t = load(unigram_json(false));
    EXPECT_EQ(t.encode("ａｂ"), t.encode("ab"));  // fullwidth letters
}

TEST(Unigram, BadVocabEntriesAreNamed) {
    nlohmann::json json = unigram_json(false);
    json["model"]["vocab"][4] = "a";
    EXPECT_EQ(Tokenizer::from_json(json).error(), "model.vocab[4]: must be [piece, score]");
    json = unigram_json(false);
    json["model"]["unk_id"] = 99;
    EXPECT_EQ(Tokenizer::from_json(json).error(), "model.unk_id: 99 is past the vocab");
}

// A byte-level BPE with two special tokens right after the model vocab, as Llama-3 lays them out.
nlohmann::json byte_level_base() {
    BpeTrainerOptions options;
    options.vocab_size = 256 + 4 + 2;
    options.special_tokens = {"<|begin|>", "<|end|>"};
    options.bos_token = "<|begin|>";
    BpeTrainer trainer(options);
    EXPECT_TRUE(trainer.add_text("the cat the cat the hat").ok());
    Result<nlohmann::ordered_json> json = trainer.train();
    EXPECT_TRUE(json.ok()) << json.error();
    return nlohmann::json::parse(json->dump());
}

TEST(BpeExtender, KeepsEveryIdAndAddsTokensAfterTheAddedOnes) {
    const nlohmann::json base_json = byte_level_base();
    const Tokenizer base = load(base_json);
    ASSERT_EQ(base.vocab_size(), 262u);
    Result<BpeExtender> extender = BpeExtender::create(base_json, {5, 2});
    ASSERT_TRUE(extender.ok()) << extender.error();
    for (int i = 0; i < 3; ++i)
        ASSERT_TRUE(extender->add_text("кот кот кот").ok());
    Result<BpeExtension> extension = extender->extend();
    ASSERT_TRUE(extension.ok()) << extension.error();
    EXPECT_EQ(extension->first_new_id, 262);
    EXPECT_EQ(extension->new_tokens, 5u);
    const Tokenizer extended = load(extension->document);
    for (int32_t id = 0; id < 262; ++id)
        EXPECT_EQ(base.id_to_token(id), extended.id_to_token(id)) << id;
    // The added tokens are in the model vocab too, at their ids, so the HF library keeps those ids.
    EXPECT_EQ(extension->document["model"]["vocab"]["<|end|>"], 261);
    EXPECT_EQ(extended.encode("<|begin|>кот"),
              (std::vector<int32_t>{260, 266}));  // " кот" is not a word here
    EXPECT_LT(extended.encode("кот кот").size(), base.encode("кот кот").size());
    EXPECT_EQ(*extended.decode(extended.encode("кот кот")), "кот кот");
}

// A SentencePiece-style BPE (Llama-2 layout) that knows no Cyrillic: it spells "жук" in <0xNN> tokens.
nlohmann::json sentencepiece_base() {
    return sentencepiece_bpe_json({"▁", "a", "b", "▁a"}, {"▁ a"});
}

TEST(BpeExtender, MissingCharactersBecomeTokensBeforeMerges) {
    const Tokenizer base = load(sentencepiece_base());
    Result<BpeExtender> extender = BpeExtender::create(sentencepiece_base(), {6, 2});
    ASSERT_TRUE(extender.ok()) << extender.error();
    ASSERT_TRUE(extender->add_text("жук жук жук ab ё").ok());
    Result<BpeExtension> extension = extender->extend();
    ASSERT_TRUE(extension.ok()) << extension.error();
    EXPECT_EQ(extension->first_new_id, 263);
    EXPECT_EQ(extension->new_tokens, 6u);
    const Tokenizer extended = load(extension->document);
    // ж у к (3 times each) are tokens now, ё (once) is not; merges join them: no byte tokens left in "жук".
    EXPECT_TRUE(extended.token_to_id("ж").has_value());
    EXPECT_FALSE(extended.token_to_id("ё").has_value());
    EXPECT_EQ(base.encode("жук").size(), 7u);  // ▁ and six bytes
    EXPECT_LE(extended.encode("жук").size(), 2u);
    EXPECT_EQ(*extended.decode(extended.encode("жук ё ab")), "жук ё ab");
    for (int32_t id = 0; id < 263; ++id)
        EXPECT_EQ(base.id_to_token(id), extended.id_to_token(id)) << id;
}

TEST(BpeExtender, RefusesAUnigramBase) {
    EXPECT_EQ(BpeExtender::create(unigram_json(false), {}).error(),
              "model \"Unigram\": only BPE tokenizers can be extended");
}

TEST(TokenizerStats, CountsCharactersWordsUnknownsAndFallbacks) {
    const TextCounts counts = count_text("  два слова\u00A0и\tещё ");
    EXPECT_EQ(counts.words, 4u);
    EXPECT_EQ(counts.characters, 18u);
    const Tokenizer t = load(unigram_json(true));
    TokenizerStats stats;
    ASSERT_TRUE(add_to_stats(t, "ab ж", stats).ok());
    // ▁a b ▁ <0xD0> <0xB6>
    EXPECT_EQ(stats.tokens, 5u);
    EXPECT_EQ(stats.byte_fallback, 2u);
    EXPECT_EQ(stats.unknown, 0u);
    EXPECT_DOUBLE_EQ(stats.chars_per_token(), 4.0 / 5.0);
    EXPECT_DOUBLE_EQ(stats.words_per_token(), 2.0 / 5.0);
    const Tokenizer no_fallback = load(unigram_json(false));
    TokenizerStats unknown;
    ASSERT_TRUE(add_to_stats(no_fallback, "ab ж", unknown).ok());
    EXPECT_EQ(unknown.unknown, 1u);
    EXPECT_FALSE(add_to_stats(t, "\xff", stats).ok());
    stats.name = "A.json";
    unknown.name = "B.json";
    const std::string table = format_stats_table({stats, unknown});
    EXPECT_NE(table.find("chars per token       0.800"), std::string::npos) << table;
    EXPECT_EQ(stats_json({stats, unknown})[1]["unknown_tokens"], 1);
}

}  // namespace
}  // namespace slipway::tokenizer
