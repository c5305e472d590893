// Extends an existing BPE tokenizer.json with new merges and tokens learned on a corpus (`tokenizer
// extend`): the base's normalizer, pre-tokenizer and merges split the corpus first, then BPE training
// continues on what is left. Characters the base spells with byte fallback (or unk) and that occur at least
// min_frequency times become tokens first. Every base token and every added/special token keeps its id.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "contract/status.h"
#include "tokenizer/tokenizer.h"

namespace slipway::tokenizer {

struct BpeExtendOptions {
    size_t add = 1000;          // new tokens wanted (fewer when no pair reaches min_frequency)
    int64_t min_frequency = 2;  // pairs seen fewer times are never merged
};

// What extend() added, for the command's report.
struct BpeExtension {
    nlohmann::json document;  // the extended tokenizer.json (keys sorted: the vocab is large)
    size_t new_tokens = 0;
    size_t new_merges = 0;
    int32_t first_new_id = 0;
};

class BpeExtender {
public:
    // `base` is a tokenizer.json with a BPE model. Errors name what is unsupported.
    static Result<BpeExtender> create(nlohmann::json base, BpeExtendOptions options);

    // Counts the words the base tokenizer cuts one text into (valid UTF-8).
    [[nodiscard]] Status add_text(std::string_view text);
    // Learns the new merges; the result keeps the base's other components as they were.
    Result<BpeExtension> extend(const std::function<void(size_t tokens, size_t target)>& progress = {}) const;

    size_t distinct_words() const { return word_counts_.size(); }

private:
    BpeExtender(nlohmann::json base, Tokenizer tokenizer, BpeExtendOptions options)
        : base_(std::move(base)), tokenizer_(std::move(tokenizer)), options_(options) {}

    nlohmann::json base_;
    Tokenizer tokenizer_;
    BpeExtendOptions options_;
    std::unordered_map<std::string, int64_t> word_counts_;
};

}  // namespace slipway::tokenizer
