// Unigram encoding of unigram.h, following the HF tokenizers library's Unigram::encode_optimized and
// Unigram::tokenize: one forward pass keeps, for every byte offset, the best-scoring path that ends there.
#include "tokenizer/unigram.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <system_error>

#include <nlohmann/json.hpp>

#include "tokenizer/unicode.h"

namespace slipway::tokenizer {
namespace {

// 1e0 .. 1e308, each correctly rounded (like the literals of serde_json's POW10).
const std::array<double, 309>& powers_of_ten() {
    static const std::array<double, 309> table = [] {
        std::array<double, 309> t{};
        for (size_t i = 0; i < t.size(); ++i)
            t[i] = std::strtod(("1e" + std::to_string(i)).c_str(), nullptr);
        return t;
    }();
    return table;
}

// An unknown character costs this much below the least likely piece (HF's K_UNK_PENALTY).
constexpr double kUnknownPenalty = 10.0;

// The double that the HF library holds for a score. It reads tokenizer.json with serde_json, whose default
// float parser takes all digits as one u64, converts that to a double (rounding past 2^53) and then
// divides by a power of ten (rounding again): a 17-digit score can land one ulp from the correctly
// rounded value we parse. Viterbi ties then break differently, so the same arithmetic is done here, on
// the shortest digits of our value (the digits a JSON writer puts in the file).
double as_serde_json_reads(double value) {
    char text[64];
    const std::to_chars_result written = std::to_chars(text, text + sizeof(text), value);
    if (written.ec != std::errc()) return value;
    const char* p = text;
    const bool negative = *p == '-';
    if (negative) ++p;
    uint64_t significand = 0;
    int exponent = 0;
    bool after_point = false;
    for (; p != written.ptr && *p != 'e'; ++p) {
        if (*p == '.') {
            after_point = true;
            continue;
        }
        significand = significand * 10 + static_cast<uint64_t>(*p - '0');  // at most 17 digits: no overflow
        exponent -= after_point;
    }
    if (p != written.ptr) exponent += std::atoi(p + 1);
    double f = static_cast<double>(significand);
    // serde_json's POW10 table holds 1e0..1e308; past it the value is first divided by 1e308.
    while (exponent < -308 && f != 0.0) {
        f /= 1e308;
        exponent += 308;
    }
    const std::array<double, 309>& pow10 = powers_of_ten();
    if (exponent >= 0) {
        f *= exponent < 309 ? pow10[static_cast<size_t>(exponent)] : std::numeric_limits<double>::infinity();
    } else {
        f /= pow10[static_cast<size_t>(-exponent)];
    }
    return negative ? -f : f;
}

struct BestPath {
    int32_t id = -1;
    double score = 0.0;
    int64_t starts_at = -1;  // -1: no path ends here yet
};

}  // namespace

Result<UnigramModel> UnigramModel::from_json(const nlohmann::json& model) {
    UnigramModel unigram;
    try {
        const nlohmann::json& vocab = model.at("vocab");
        if (!vocab.is_array() || vocab.empty())
            return Status::Error("model.vocab: must be a non-empty list of [piece, score]");
        if (static_cast<int64_t>(vocab.size()) > kMaxTokenId + 1)
            return Status::Error("model.vocab: more than " + std::to_string(kMaxTokenId + 1) + " pieces");
        unigram.node_token_.push_back(-1);
        unigram.min_score_ = std::numeric_limits<double>::infinity();
        for (size_t i = 0; i < vocab.size(); ++i) {
            const nlohmann::json& entry = vocab[i];
            if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number())
                return Status::Error("model.vocab[" + std::to_string(i) + "]: must be [piece, score]");
            const auto id = static_cast<int32_t>(i);
            std::string piece = entry[0].get<std::string>();
            const double score = as_serde_json_reads(entry[1].get<double>());
            int32_t node = 0;
            for (unsigned char b : piece) {
                int32_t next = unigram.child(node, b);
                if (next < 0) {
                    next = static_cast<int32_t>(unigram.node_token_.size());
                    unigram.node_token_.push_back(-1);
                    unigram.edges_.emplace((static_cast<uint64_t>(node) << 8) | b, next);
                }
                node = next;
            }
            unigram.node_token_[static_cast<size_t>(node)] = id;  // the last of equal pieces wins, as in HF
            unigram.ids_[piece] = id;
            unigram.min_score_ = std::min(unigram.min_score_, score);
            unigram.pieces_.push_back(std::move(piece));
            unigram.scores_.push_back(score);
        }
        const auto unk = model.find("unk_id");
        if (unk != model.end() && !unk->is_null()) {
            Result<int32_t> id = parse_token_id(*unk, "model.unk_id");
            if (!id.ok()) return id.status();
            if (static_cast<size_t>(*id) >= unigram.pieces_.size())
                return Status::Error("model.unk_id: " + std::to_string(*id) + " is past the vocab");
            unigram.unk_id_ = *id;
        }
        const auto fallback = model.find("byte_fallback");
        unigram.byte_fallback_ = fallback != model.end() && fallback->is_boolean() && fallback->get<bool>();
        for (int b = 0; b < 256; ++b) {
            const auto it = unigram.ids_.find(byte_token_name(static_cast<unsigned char>(b)));
            unigram.byte_token_ids_[static_cast<size_t>(b)] = it == unigram.ids_.end() ? -1 : it->second;
            if (it != unigram.ids_.end()) {
                unigram.is_byte_token_.resize(unigram.pieces_.size());
                unigram.is_byte_token_[static_cast<size_t>(it->second)] = true;
            }
        }
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(std::string("model: ") + e.what());
    }
    return unigram;
}

int32_t UnigramModel::child(int32_t node, unsigned char byte) const {
    const auto it = edges_.find((static_cast<uint64_t>(node) << 8) | byte);
    return it == edges_.end() ? -1 : it->second;
}

std::vector<std::string_view> UnigramModel::segment(std::string_view piece) const {
    const size_t size = piece.size();
    std::vector<BestPath> best(size + 1);
    best[0].starts_at = 0;  // the empty path; only its score (0) is read
    const double unk_score = min_score_ - kUnknownPenalty;
    size_t start = 0;
    while (start < size) {
        const double score_here = best[start].score;
        const size_t char_length =
            std::min(utf8_sequence_length(static_cast<unsigned char>(piece[start])), size - start);
        bool has_single_character = false;
        // Every piece that is a prefix of piece[start:], shortest first.
        int32_t node = 0;
        for (size_t end = start; end < size;) {
            node = child(node, static_cast<unsigned char>(piece[end]));
            if (node < 0) break;
            ++end;
            const int32_t id = node_token_[static_cast<size_t>(node)];
            if (id < 0) continue;
            BestPath& target = best[end];
            const double candidate = scores_[static_cast<size_t>(id)] + score_here;
            if (target.starts_at < 0 || candidate > target.score) {
                target = {id, candidate, static_cast<int64_t>(start)};
            }
            has_single_character = has_single_character || end - start == char_length;
        }
        if (!has_single_character) {
            BestPath& target = best[start + char_length];
            const double candidate = unk_score + score_here;
            if (target.starts_at < 0 || candidate > target.score) {
                target = {unk_id_.value_or(-1), candidate, static_cast<int64_t>(start)};
            }
        }
        start += char_length;
    }
    // Walk back from the end; consecutive unknowns join into one string (HF's fuse_unk, always on here).
    std::vector<std::string_view> out;
    size_t end = size;
    size_t fused_start = size;  // start of the unknown run being joined; == fused_end when none
    size_t fused_end = size;
    while (end > 0) {
        const BestPath& node = best[end];
        const auto begin = static_cast<size_t>(node.starts_at);
        if (unk_id_ && node.id == *unk_id_) {
            if (fused_start == fused_end) fused_end = end;
            fused_start = begin;
        } else {
            if (fused_start != fused_end) out.push_back(piece.substr(fused_start, fused_end - fused_start));
            fused_start = fused_end = begin;
            out.push_back(piece.substr(begin, end - begin));
        }
        end = begin;
    }
    if (fused_start != fused_end) out.push_back(piece.substr(fused_start, fused_end - fused_start));
    std::reverse(out.begin(), out.end());
    return out;
}

void UnigramModel::tokenize(std::string_view piece, std::vector<int32_t>& out) const {
    for (std::string_view token : segment(piece)) {
        const auto it = ids_.find(std::string(token));
        if (it != ids_.end()) {
            out.push_back(it->second);
            continue;
        }
        if (byte_fallback_) {
            const bool all_bytes = std::all_of(token.begin(), token.end(), [this](char c) {
                return byte_token_ids_[static_cast<unsigned char>(c)] >= 0;
            });
            if (all_bytes) {
                for (unsigned char b : token)
                    out.push_back(byte_token_ids_[b]);
                continue;
            }
        }
        // Without an unk id the HF library fails the whole encode; here the span is dropped.
        if (unk_id_) out.push_back(*unk_id_);
    }
}

std::optional<int32_t> UnigramModel::token_to_id(std::string_view token) const {
    const auto it = ids_.find(std::string(token));
    if (it == ids_.end()) return std::nullopt;
    return it->second;
}

const std::string* UnigramModel::id_to_token(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= pieces_.size()) return nullptr;
    return &pieces_[static_cast<size_t>(id)];
}

bool UnigramModel::is_byte_fallback_token(int32_t id) const {
    return byte_fallback_ && id >= 0 && static_cast<size_t>(id) < is_byte_token_.size() &&
           is_byte_token_[static_cast<size_t>(id)];
}

}  // namespace slipway::tokenizer
