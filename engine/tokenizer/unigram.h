// The Unigram model of tokenizer.json (SentencePiece's, as the HF tokenizers library runs it): the best
// segmentation of a piece by total log-probability (Viterbi over the lattice of vocabulary matches),
// unknown characters fused into one unk, and unknown spans replaced by <0xNN> tokens with byte_fallback.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"
#include "tokenizer/model.h"

namespace slipway::tokenizer {

class UnigramModel final : public Model {
public:
    // From the "model" object of tokenizer.json (type Unigram): vocab [[piece, score], ...], unk_id,
    // byte_fallback. Errors name the offending key.
    static Result<UnigramModel> from_json(const nlohmann::json& model);

    void tokenize(std::string_view piece, std::vector<int32_t>& out) const override;
    std::optional<int32_t> token_to_id(std::string_view token) const override;
    const std::string* id_to_token(int32_t id) const override;
    size_t vocab_size() const override { return pieces_.size(); }
    std::optional<int32_t> unk_id() const override { return unk_id_; }
    bool is_byte_fallback_token(int32_t id) const override;

    // The best segmentation of `piece` as token strings (unknown runs fused), before byte fallback.
    std::vector<std::string_view> segment(std::string_view piece) const;

private:
    // A byte trie over all pieces: node 0 is the root; `edges` maps (node << 8 | byte) to the child.
    int32_t child(int32_t node, unsigned char byte) const;

    std::vector<std::string> pieces_;
    std::vector<double> scores_;
    std::unordered_map<std::string, int32_t> ids_;
    std::unordered_map<uint64_t, int32_t> edges_;
    std::vector<int32_t> node_token_;  // node -> token id ending there, or -1
    std::optional<int32_t> unk_id_;
    bool byte_fallback_ = false;
    double min_score_ = 0.0;
    std::array<int32_t, 256> byte_token_ids_{};  // <0xNN> ids, -1 when absent
    std::vector<bool> is_byte_token_;            // by id
};

}  // namespace slipway::tokenizer
