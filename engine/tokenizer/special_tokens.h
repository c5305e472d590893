// Which special tokens a tokenizer puts around each text it encodes with add_special_tokens (a BOS before,
// an EOS after), decided in one place for everything that needs it: the tokenizer's encode (generate, score,
// chat) and the GGUF export's tokenizer.ggml.add_bos_token / add_eos_token, so that llama.cpp and Ollama feed
// a model the ids the engine does. The rule is HF's and gguf-py's SpecialVocab's, for BOS and EOS each:
//   1. tokenizer_config.json's add_bos_token / add_eos_token where it is a bool (the token: its bos_token /
//      eos_token, else the one the post-processor places);
//   2. else the post_processor: a TemplateProcessing, or a Sequence holding one: the special tokens before
//   and
//      after $A in "single". ByteLevel says nothing; any other processor is refused by name;
//   3. else the convention of the tokenizer's kind: SentencePiece-style (Unigram, or BPE with byte fallback
//   or
//      a Metaspace pre-tokenizer) adds its BOS, as HF's LlamaTokenizer and llama.cpp's SentencePiece vocab
//      do; byte-level BPE (GPT-2, Llama 3, Qwen) adds nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"

namespace slipway::tokenizer {

struct SpecialTokens {
    std::vector<int32_t> prefix;  // ids before the text's own (a BOS), in order
    std::vector<int32_t> suffix;  // ids after them (an EOS)
    // Where each side was decided, for people: "tokenizer_config.json add_bos_token", "post_processor
    // TemplateProcessing", or "convention: ..." with the reason.
    std::string prefix_source, suffix_source;
    // The tokenizer's BOS and EOS tokens, added or not (HF's bos_token_id / eos_token_id):
    // tokenizer_config.json's bos_token / eos_token where it is a token here, else the first id the template
    // puts before the text / the last after it. lm-eval conditions a text's first token on the BOS (else the
    // EOS).
    std::optional<int32_t> bos_id, eos_id;
};

// A token's id from its text (added tokens first, then the model's vocabulary), if the tokenizer has it.
using TokenIdLookup = std::function<std::optional<int32_t>(std::string_view token)>;

// `tokenizer`: tokenizer.json's document; `config`: tokenizer_config.json's, or null when there is none.
// Errors name the file and the key: an unsupported post_processor, a bos_token / eos_token that is no token
// of the tokenizer, a template token without ids.
[[nodiscard]] Result<SpecialTokens> decide_special_tokens(const nlohmann::json& tokenizer,
                                                          const nlohmann::json* config,
                                                          const TokenIdLookup& token_id);

// tokenizer_config.json's "<kind>_token" ("bos", "eos", "unk", ...): a string, or an AddedToken
// {"content": ...}; nullopt when absent or neither. `config` may be null.
std::optional<std::string> config_special_token(const nlohmann::json* config, const std::string& kind);

}  // namespace slipway::tokenizer
