// Trains a byte-level BPE tokenizer (Llama-3-style pre-tokenizer: the Split regex + ByteLevel) from text
// and writes it as a Hugging Face tokenizer.json that the HF library loads and encodes like ours.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/status.h"

namespace slipway::tokenizer {

// Llama-3's pre-tokenizer pattern (also used by the trainer).
extern const char* const kLlama3SplitPattern;

struct BpeTrainerOptions {
    size_t vocab_size = 8192;   // including the 256 byte tokens and the special tokens
    int64_t min_frequency = 2;  // pairs seen fewer times are never merged
    std::vector<std::string> special_tokens = {"<|begin_of_text|>", "<|end_of_text|>", "<|pad|>"};
    std::string bos_token = "<|begin_of_text|>";  // added by the post-processor; empty = none
};

class BpeTrainer {
public:
    explicit BpeTrainer(BpeTrainerOptions options);
    // Counts the pre-tokenized words of one text (valid UTF-8).
    Status add_text(const std::string& text);
    // Learns merges until vocab_size or no pair reaches min_frequency; returns the tokenizer.json document.
    Result<nlohmann::ordered_json> train(
        const std::function<void(size_t tokens, size_t target)>& progress = {});

    size_t distinct_words() const { return word_counts_.size(); }

private:
    BpeTrainerOptions options_;
    std::unordered_map<std::string, int64_t> word_counts_;  // byte-level-mapped words
};

}  // namespace slipway::tokenizer
