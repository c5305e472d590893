// A Hugging Face tokenizer.json tokenizer: added/special tokens, normalizer, pre-tokenizer, model (BPE or
// Unigram), post-processor and decoder, encoding and decoding exactly as the HF tokenizers library does
// for the byte-level (Llama-3, Qwen, GPT-2) and SentencePiece-style (Llama-2, Mistral) BPE families and
// for SentencePiece Unigram files.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"
#include "tokenizer/special_tokens.h"

namespace slipway::tokenizer {

class Model;
class Normalizer;
class PreTokenizer;
class Decoder;
class AddedVocabulary;

struct AddedToken {
    int32_t id = 0;
    std::string content;
    bool special = false;
    bool normalized = false;
    bool lstrip = false;
    bool rstrip = false;
    bool single_word = false;
};

class Tokenizer {
public:
    // Errors name the file and the unsupported component or bad key. from_file also reads the
    // tokenizer_config.json beside `path`, where there is one, as HF's AutoTokenizer does; `config` is that
    // file's document (null: none). Both decide the special tokens by special_tokens.h's rule.
    static Result<Tokenizer> from_file(const std::string& path);
    static Result<Tokenizer> from_json(const nlohmann::json& document,
                                       const nlohmann::json* config = nullptr);

    // For text the caller trusts: it must be valid UTF-8, and a regex engine error (PCRE2's match limits)
    // leaves the ids found before it. Input from users goes through encode_checked, which reports both.
    // Special tokens written in the text are matched.
    std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = false) const;
    // Like encode, but invalid UTF-8 is an error instead of a precondition.
    Result<std::vector<int32_t>> encode_checked(std::string_view text, bool add_special_tokens = false) const;
    // Unknown ids are an error naming the id.
    Result<std::string> decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;

    // The pieces the model sees for `text`: normalized, cut at added tokens (which are left out) and
    // pre-tokenized. For trainers that continue from this tokenizer.
    [[nodiscard]] Status pre_tokenize(std::string_view text, std::vector<std::string>& pieces) const;
    // The model's ids for one piece from pre_tokenize (appended to `out`).
    void tokenize_piece(std::string_view piece, std::vector<int32_t>& out) const;
    bool has_pre_tokenizer() const;

    std::optional<int32_t> token_to_id(std::string_view token) const;
    std::optional<std::string> id_to_token(int32_t id) const;
    size_t vocab_size() const;  // highest id + 1, added tokens included
    const std::vector<AddedToken>& added_tokens() const;
    std::optional<int32_t> unk_id() const;    // the model's unknown token
    bool is_byte_fallback(int32_t id) const;  // a <0xNN> token of byte fallback
    // What encode(..., add_special_tokens = true) puts around a text, and where that was decided.
    const SpecialTokens& special_tokens() const;

private:
    struct Impl;
    std::shared_ptr<const Impl> impl_;
};

}  // namespace slipway::tokenizer
