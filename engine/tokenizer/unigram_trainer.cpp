// SentencePiece Unigram training of unigram_trainer.h: sentences -> SentencePieceTrainer::Train (in
// memory) -> the model's pieces and scores -> tokenizer.json with a Unigram model.
#include "tokenizer/unigram_trainer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "tokenizer/bpe_trainer.h"
#include "tokenizer/unicode.h"

namespace slipway::tokenizer {
namespace {

constexpr const char* kMetaspace = "\xE2\x96\x81";

class SentenceList : public sentencepiece::SentenceIterator {
public:
    explicit SentenceList(const std::vector<std::string>& sentences) : sentences_(sentences) {}
    bool done() const override { return next_ >= sentences_.size(); }
    void Next() override { ++next_; }
    const std::string& value() const override { return sentences_[next_]; }
    sentencepiece::util::Status status() const override { return {}; }

private:
    const std::vector<std::string>& sentences_;
    size_t next_ = 0;
};

// A score rounded to 15 significant digits: every JSON reader, correctly rounding or not (serde_json's
// default parser is off by an ulp on some 17-digit numbers; see unigram.cpp), then holds the same double.
double portable_score(float score) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.15g", static_cast<double>(score));
    return std::strtod(text, nullptr);
}

nlohmann::ordered_json decoder_json() {
    return {{"type", "Sequence"},
            {"decoders",
             {{{"type", "Replace"}, {"pattern", {{"String", kMetaspace}}}, {"content", " "}},
              {{"type", "ByteFallback"}},
              {{"type", "Fuse"}},
              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
}

}  // namespace

Result<UnigramTrainer> UnigramTrainer::create(UnigramTrainerOptions options) {
    if (options.normalization != "nfkc" && options.normalization != "identity")
        return Status::Error("normalization must be nfkc or identity, not \"" + options.normalization + "\"");
    return UnigramTrainer(std::move(options));
}

Status UnigramTrainer::add_text(std::string_view text) {
    if (!is_valid_utf8(text)) return Status::Error("text is not valid UTF-8");
    // The text as the written normalizer will give it to the model: SentencePiece itself only normalizes
    // with rules of its own (its "nfkc" also turns tabs into spaces), so it is told "identity".
    if (!text.empty())
        sentences_.push_back(options_.normalization == "nfkc" ? to_nfkc(text) : std::string(text));
    return Status::Ok();
}

Result<nlohmann::ordered_json> UnigramTrainer::train() const {
    if (options_.normalization != "nfkc" && options_.normalization != "identity")
        return Status::Error("normalization must be nfkc or identity, not \"" + options_.normalization +
                             "\"");
    if (sentences_.empty()) return Status::Error("no training text");
    const std::unordered_map<std::string, std::string> args = {
        {"model_type", "unigram"},
        {"vocab_size", std::to_string(options_.vocab_size)},
        {"character_coverage", std::to_string(options_.character_coverage)},
        {"normalization_rule_name", "identity"},
        {"byte_fallback", "true"},
        {"add_dummy_prefix", "true"},
        {"remove_extra_whitespaces", "false"},
        {"split_by_whitespace", "true"},
        {"hard_vocab_limit", "false"},
        {"max_sentence_length", std::to_string(options_.max_sentence_bytes)},
        {"input_sentence_size", "0"},
        {"shuffle_input_sentence", "false"},
        {"num_threads", std::to_string(options_.threads)},
        {"unk_id", "0"},
        {"bos_id", "1"},
        {"eos_id", "2"},
        {"pad_id", "-1"},
        {"minloglevel", "1"},
        // SentencePiece leaves tabs out of its character set even with "identity"; as a symbol of its own
        // a tab is one piece instead of a <0x09> fallback.
        {"user_defined_symbols", "\t"},
    };
    SentenceList list(sentences_);
    std::string proto;
    const sentencepiece::util::Status trained =
        sentencepiece::SentencePieceTrainer::Train(args, &list, &proto);
    if (!trained.ok()) return Status::Error("sentencepiece: " + trained.ToString());
    sentencepiece::SentencePieceProcessor processor;
    if (const auto loaded = processor.LoadFromSerializedProto(proto); !loaded.ok())
        return Status::Error("sentencepiece: " + loaded.ToString());

    nlohmann::ordered_json vocab = nlohmann::ordered_json::array();
    nlohmann::ordered_json added = nlohmann::ordered_json::array();
    int32_t unk_id = -1, bos_id = -1;
    for (int id = 0; id < processor.GetPieceSize(); ++id) {
        const std::string piece = processor.IdToPiece(id);
        vocab.push_back({piece, portable_score(processor.GetScore(id))});
        if (processor.IsUnknown(id)) unk_id = id;
        if (processor.IsUnknown(id) || processor.IsControl(id))
            added.push_back(special_token_json(id, piece));
        if (processor.IsControl(id) && piece == "<s>") bos_id = id;
    }
    if (unk_id < 0 || bos_id < 0) return Status::Error("sentencepiece: the model has no <unk> or <s>");
    nlohmann::ordered_json normalizer = nullptr;
    if (options_.normalization == "nfkc") normalizer = {{"type", "NFKC"}};
    return nlohmann::ordered_json{
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer", normalizer},
        {"pre_tokenizer",
         {{"type", "Metaspace"}, {"replacement", kMetaspace}, {"prepend_scheme", "always"}, {"split", true}}},
        {"post_processor", bos_post_processor_json("<s>", bos_id)},
        {"decoder", decoder_json()},
        {"model", {{"type", "Unigram"}, {"unk_id", unk_id}, {"vocab", vocab}, {"byte_fallback", true}}}};
}

}  // namespace slipway::tokenizer
