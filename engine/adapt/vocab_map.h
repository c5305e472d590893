// Where each token of a new vocabulary takes its embedding row from in an old one (no torch): the same
// token string keeps its row; any other token gets the mean of the rows of the sub-tokens the old
// tokenizer cuts its text into. adapt-vocab initializes new embeddings with it, and LEP's conversion
// projection (lep.h) converts the base and instruct embeddings with it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "contract/status.h"
#include "tokenizer/tokenizer.h"

namespace slipway::adapt {

enum class RowSource {
    kSameToken,     // the old vocabulary has the same token string: its row, as is
    kSubTokenMean,  // the mean of the old rows of the old tokenizer's split of the token's text
    kAllMean,       // nothing to take (an id no token has, or a text the old tokenizer gives no ids): the
                    // mean of all old rows
};

struct TokenSource {
    RowSource source = RowSource::kAllMean;
    std::vector<int32_t> old_ids;  // one id for kSameToken, the split for kSubTokenMean, empty for kAllMean
};

// One entry per new id, in id order.
struct VocabMap {
    int64_t old_vocab_size = 0;
    int64_t new_vocab_size = 0;
    std::vector<TokenSource> rows;
    int64_t same = 0, split = 0, all_mean = 0;  // how many rows of each source
};

// A tokenizer.json loaded, with what the mapping needs beyond encoding: whether its model's token strings
// are byte-level (GPT-2's byte alphabet, as Llama-3 and Qwen write them) or SentencePiece-style ("▁" for a
// space, "<0xNN>" for a byte fallback).
struct TokenizerFile {
    std::string path;
    tokenizer::Tokenizer tokenizer;
    bool byte_level = false;
};
[[nodiscard]] Result<TokenizerFile> load_tokenizer_file(const std::string& path);

// The bytes a token of the model's vocabulary stands for: byte-level characters back to their bytes;
// SentencePiece-style "▁" to a space and "<0xNN>" to its byte. Added tokens are plain text already.
std::string token_bytes(const std::string& token, bool byte_level);

// The old ids of `bytes` as text: encoded without special tokens after a "\n" whose own ids are then
// dropped, so that a SentencePiece-style tokenizer neither prepends a space to a word piece nor splits a
// leading space off ("▁мир" -> " мир" -> [▁мир], "ир" -> [ир]); when the prefix's ids do not lead the
// result (the text merged with it), the text is encoded alone. Bytes that are not valid UTF-8 (a
// byte-level token holding part of a character) map byte by byte to the old vocabulary's byte tokens, and
// bytes that have none are left out.
std::vector<int32_t> old_split(const TokenizerFile& old_tokenizer, const std::string& bytes);

// The map from `old_tokenizer`'s vocabulary to `new_tokenizer`'s. Added tokens of the new tokenizer
// (special or not) follow the same rule with their content as the text: the same token in the old
// tokenizer keeps its row, any other is the mean of its content's split.
[[nodiscard]] Result<VocabMap> map_vocabularies(const TokenizerFile& old_tokenizer,
                                                const TokenizerFile& new_tokenizer);

// The text of the tokenizer.json at `path` with `tokens` appended to its added tokens, with ids from
// `first_id` on (their other fields as given): how LEP's output tokenizer gets the instruct tokenizer's
// chat tokens that the adapted one lacks, as the authors' code does.
[[nodiscard]] Result<std::string> append_added_tokens(const std::string& path,
                                                      const std::vector<tokenizer::AddedToken>& tokens,
                                                      int64_t first_id);

// (old id, new id) of the token strings both vocabularies hold, by old id: the overlap of LEP.
std::vector<std::pair<int32_t, int32_t>> shared_tokens(const VocabMap& map);

}  // namespace slipway::adapt
