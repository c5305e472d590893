// How well tokenizers fit a corpus (`tokenizer stats`): characters per token, whitespace words per token,
// the share of unknown and byte-fallback tokens, side by side for several tokenizers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/status.h"
#include "tokenizer/tokenizer.h"

namespace slipway::tokenizer {

struct TokenizerStats {
    std::string name;  // how the table heads its column (the tokenizer's path)
    size_t vocab_size = 0;
    uint64_t documents = 0;
    uint64_t characters = 0;  // Unicode code points
    uint64_t words = 0;       // runs of non-whitespace
    uint64_t tokens = 0;
    uint64_t unknown = 0;        // the model's unk token
    uint64_t byte_fallback = 0;  // <0xNN> tokens

    double chars_per_token() const { return tokens ? static_cast<double>(characters) / tokens : 0.0; }
    double words_per_token() const { return tokens ? static_cast<double>(words) / tokens : 0.0; }
    double unknown_rate() const { return tokens ? static_cast<double>(unknown) / tokens : 0.0; }
    double byte_fallback_rate() const { return tokens ? static_cast<double>(byte_fallback) / tokens : 0.0; }
};

// Adds one document (valid UTF-8), encoded without special tokens, to `stats`.
[[nodiscard]] Status add_to_stats(const Tokenizer& tokenizer, std::string_view text, TokenizerStats& stats);

// Code points and whitespace-separated words of a text (Unicode White_Space characters separate words).
struct TextCounts {
    uint64_t characters = 0;
    uint64_t words = 0;
};
TextCounts count_text(std::string_view text);

// One row per measure, one column per tokenizer.
std::string format_stats_table(const std::vector<TokenizerStats>& stats);
nlohmann::ordered_json stats_json(const std::vector<TokenizerStats>& stats);

}  // namespace slipway::tokenizer
