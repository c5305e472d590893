// The BPE model of tokenizer.json: vocab, ranked merges, byte_fallback, fuse_unk, ignore_merges. Splits
// one pre-tokenized piece into ids exactly as the HF tokenizers library does (lowest-rank merge first,
// leftmost on ties), with a per-thread cache of words already seen.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"
#include "tokenizer/model.h"

namespace slipway::tokenizer {

class BpeModel final : public Model {
public:
    // From the "model" object of tokenizer.json (type BPE). Errors name the offending key.
    static Result<BpeModel> from_json(const nlohmann::json& model);

    void tokenize(std::string_view piece, std::vector<int32_t>& out) const override;
    std::optional<int32_t> token_to_id(std::string_view token) const override;
    const std::string* id_to_token(int32_t id) const override;
    size_t vocab_size() const override { return id_to_token_.size(); }
    std::optional<int32_t> unk_id() const override { return unk_id_; }
    bool is_byte_fallback_token(int32_t id) const override;
    bool byte_fallback() const { return byte_fallback_; }

private:
    struct Merge {
        int32_t rank;
        int32_t new_id;
    };
    static uint64_t pair_key(int32_t a, int32_t b) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
    }
    void merge_word(std::string_view word, std::vector<int32_t>& out) const;

    std::unordered_map<std::string, int32_t> vocab_;
    std::vector<std::string> id_to_token_;
    std::unordered_map<uint64_t, Merge> merges_;
    std::optional<int32_t> unk_id_;
    std::string continuing_subword_prefix_;
    std::string end_of_word_suffix_;
    bool byte_fallback_ = false;
    bool fuse_unk_ = false;
    bool ignore_merges_ = false;
    std::array<int32_t, 256> byte_token_ids_{};  // <0xNN> ids for byte fallback, -1 when absent
    std::unordered_set<int32_t> byte_token_id_set_;
    uint64_t instance_id_ = 0;  // keys the per-thread cache
};

}  // namespace slipway::tokenizer
