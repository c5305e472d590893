// The corpus measures of tokenizer_stats.h and their table and JSON forms.
#include "tokenizer/tokenizer_stats.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tokenizer/unicode.h"

namespace slipway::tokenizer {
namespace {

bool is_white_space(char32_t c) {  // Unicode's White_Space property
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

char32_t decode_at(std::string_view s, size_t i, size_t length) {
    const auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
    switch (length) {
        case 1:
            return b(0);
        case 2:
            return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
        case 3:
            return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
        default:
            return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    }
}

std::string fixed(double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.*f", digits, value);
    return buffer;
}

}  // namespace

TextCounts count_text(std::string_view text) {
    TextCounts counts;
    bool in_word = false;
    for (size_t i = 0; i < text.size();) {
        const size_t length =
            std::min(utf8_sequence_length(static_cast<unsigned char>(text[i])), text.size() - i);
        const bool white = is_white_space(decode_at(text, i, length));
        counts.words += !white && !in_word;
        in_word = !white;
        ++counts.characters;
        i += length;
    }
    return counts;
}

Status add_to_stats(const Tokenizer& tokenizer, std::string_view text, TokenizerStats& stats) {
    Result<std::vector<int32_t>> ids = tokenizer.encode_checked(text);
    if (!ids.ok()) return ids.status();
    const TextCounts counts = count_text(text);
    const std::optional<int32_t> unk = tokenizer.unk_id();
    ++stats.documents;
    stats.characters += counts.characters;
    stats.words += counts.words;
    stats.tokens += ids->size();
    for (int32_t id : *ids) {
        stats.unknown += unk && id == *unk;
        stats.byte_fallback += tokenizer.is_byte_fallback(id);
    }
    return Status::Ok();
}

std::string format_stats_table(const std::vector<TokenizerStats>& stats) {
    using Row = std::pair<std::string, std::vector<std::string>>;
    std::vector<Row> rows = {{"", {}},
                             {"vocab size", {}},
                             {"tokens", {}},
                             {"chars per token", {}},
                             {"words per token", {}},
                             {"unknown rate", {}},
                             {"byte fallback rate", {}}};
    for (const TokenizerStats& s : stats) {
        rows[0].second.push_back(s.name);
        rows[1].second.push_back(std::to_string(s.vocab_size));
        rows[2].second.push_back(std::to_string(s.tokens));
        rows[3].second.push_back(fixed(s.chars_per_token(), 3));
        rows[4].second.push_back(fixed(s.words_per_token(), 3));
        rows[5].second.push_back(fixed(s.unknown_rate(), 5));
        rows[6].second.push_back(fixed(s.byte_fallback_rate(), 5));
    }
    size_t label_width = 0;
    std::vector<size_t> widths(stats.size(), 0);
    for (const Row& row : rows) {
        label_width = std::max(label_width, row.first.size());
        for (size_t c = 0; c < row.second.size(); ++c)
            widths[c] = std::max(widths[c], row.second[c].size());
    }
    std::ostringstream out;
    for (const Row& row : rows) {
        out << row.first << std::string(label_width - row.first.size(), ' ');
        for (size_t c = 0; c < row.second.size(); ++c)
            out << "  " << std::string(widths[c] - row.second[c].size(), ' ') << row.second[c];
        out << "\n";
    }
    if (!stats.empty()) {
        out << "(" << stats.front().documents << " documents, " << stats.front().characters << " characters, "
            << stats.front().words << " words)\n";
    }
    return out.str();
}

nlohmann::ordered_json stats_json(const std::vector<TokenizerStats>& stats) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const TokenizerStats& s : stats) {
        out.push_back({{"tokenizer", s.name},
                       {"vocab_size", s.vocab_size},
                       {"documents", s.documents},
                       {"characters", s.characters},
                       {"words", s.words},
                       {"tokens", s.tokens},
                       {"unknown_tokens", s.unknown},
                       {"byte_fallback_tokens", s.byte_fallback},
                       {"chars_per_token", s.chars_per_token()},
                       {"words_per_token", s.words_per_token()},
                       {"unknown_rate", s.unknown_rate()},
                       {"byte_fallback_rate", s.byte_fallback_rate()}});
    }
    return out;
}

}  // namespace slipway::tokenizer
