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
    std::string normalization = "nfkc";  // "nfkc" or "identity" (SentencePiece rule names)
    size_t max_sentence_bytes = 65536;   // longer lines are left out of training
    int threads = 2;
};

class UnigramTrainer {
public:
    explicit UnigramTrainer(UnigramTrainerOptions options);
    // Each line of the text is one training sentence (valid UTF-8).
    [[nodiscard]] Status add_text(std::string_view text);
    // Runs SentencePiece's trainer; returns the tokenizer.json document.
    Result<nlohmann::ordered_json> train() const;

    size_t sentences() const { return sentences_.size(); }

private:
    UnigramTrainerOptions options_;
    std::vector<std::string> sentences_;
};

}  // namespace slipway::tokenizer
