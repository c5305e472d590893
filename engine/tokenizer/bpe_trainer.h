// Trains a byte-level BPE tokenizer (Llama-3-style pre-tokenizer: the Split regex + ByteLevel) from text
// and writes it as a Hugging Face tokenizer.json that the HF library loads and encodes like ours.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/status.h"

namespace slipway::tokenizer {

// Llama-3's pre-tokenizer pattern (also used by the trainer).
extern const char* const kLlama3SplitPattern;

// A vocabulary that merges grow: id -> token (ids nobody uses hold an empty string) and token -> id.
struct MergeVocabulary {
    std::vector<std::string> tokens;
    std::unordered_map<std::string, int32_t> ids;
    int32_t add(const std::string& token);  // the next id, tokens.size()
};

// Distinct words as symbol ids, with how often each was seen.
struct WordTable {
    std::vector<std::vector<int32_t>> words;
    std::vector<int64_t> counts;
};

struct MergeLearningOptions {
    size_t new_tokens = 0;      // stop once this many tokens were added to the vocabulary
    int64_t min_frequency = 2;  // pairs seen fewer times are never merged
    // Pairs it refuses are never counted; empty: every pair may merge.
    std::function<bool(int32_t left, int32_t right)> can_merge;
    std::function<void(size_t merges, size_t new_tokens)> progress;
};

// Greedy BPE: repeatedly merges the most frequent pair (ties: lowest ids), updating pair counts only in
// the words a merge touches. Returns the merges as (left, right) ids in rank order; `vocabulary` gains the
// new tokens (a merge whose string is already a token maps to that token, as HF's format allows).
std::vector<std::pair<int32_t, int32_t>> learn_merges(MergeVocabulary& vocabulary, WordTable words,
                                                      const MergeLearningOptions& options);

// An added_tokens entry of a special token that is matched in raw text (normalized false).
nlohmann::ordered_json special_token_json(int32_t id, const std::string& content);
// A TemplateProcessing post-processor that puts `bos_token` before every sequence.
nlohmann::ordered_json bos_post_processor_json(const std::string& bos_token, int32_t bos_id);

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
