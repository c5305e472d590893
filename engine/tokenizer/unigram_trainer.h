// Trains a Unigram tokenizer with SentencePiece's own trainer (Debian's libsentencepiece, C++ API) and
// writes it as a Hugging Face tokenizer.json that the HF library and our UnigramModel encode alike: NFKC
// (or no) normalizer, Metaspace pre-tokenizer (prepend "always", split on spaces), byte fallback.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/status.h"

namespace slipway::tokenizer {

struct UnigramTrainerOptions {
    size_t vocab_size = 8000;            // pieces, with <unk> <s> </s> and the 256 byte pieces
    double character_coverage = 0.9995;  // characters outside it fall back to bytes
    std::string normalization = "nfkc";  // the written normalizer: "nfkc" (NFKC) or "identity" (none)
    size_t max_sentence_bytes = 65536;   // longer lines are left out of training
    int threads = 2;
};

class UnigramTrainer {
public:
    // Errors name a bad option.
    static Result<UnigramTrainer> create(UnigramTrainerOptions options);
    // One training sentence (valid UTF-8). Line breaks stay in it: they are characters to SentencePiece,
    // so they get pieces of their own instead of falling back to bytes.
    [[nodiscard]] Status add_text(std::string_view text);
    // Runs SentencePiece's trainer; returns the tokenizer.json document.
    Result<nlohmann::ordered_json> train() const;

    size_t sentences() const { return sentences_.size(); }

private:
    explicit UnigramTrainer(UnigramTrainerOptions options) : options_(std::move(options)) {}
    UnigramTrainerOptions options_;
    std::vector<std::string> sentences_;
};

}  // namespace slipway::tokenizer
