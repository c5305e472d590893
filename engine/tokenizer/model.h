// The model stage of a tokenizer.json (BPE or Unigram): splits one pre-tokenized piece into ids, and
// maps ids to token strings and back. Tokenizer runs whichever model the file names through this seam.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"

namespace slipway::tokenizer {

// Ids are int32 as in the HF library. No real vocabulary comes near this limit (Llama-3 128k, Gemma 256k);
// an id past it in tokenizer.json is an error, not a vector of that many tokens.
inline constexpr int64_t kMaxTokenId = (int64_t{1} << 24) - 1;

// A token id from tokenizer.json: an integer in [0, kMaxTokenId]; the error names `where`.
Result<int32_t> parse_token_id(const nlohmann::json& value, const std::string& where);

// "<0xNN>": the token that byte fallback emits for byte `b`.
inline std::string byte_token_name(unsigned char b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    return name;
}

class Model {
public:
    virtual ~Model() = default;
    // Appends the ids of one piece to `out`.
    virtual void tokenize(std::string_view piece, std::vector<int32_t>& out) const = 0;
    virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
    // nullptr for an id the model does not have.
    virtual const std::string* id_to_token(int32_t id) const = 0;
    virtual size_t vocab_size() const = 0;  // highest id + 1
    virtual std::optional<int32_t> unk_id() const = 0;
    // True for the <0xNN> tokens that byte fallback emits.
    virtual bool is_byte_fallback_token(int32_t id) const = 0;
};

}  // namespace slipway::tokenizer
