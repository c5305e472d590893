// The token cache's on-disk format: file names, and meta.json (magic, format version, the inputs and
// settings it was made from, and the counts) as a struct with its JSON mapping.
//
// A cache is a folder <cache_dir>/<key> holding:
//   meta.json          this struct (written last, inside a temporary folder renamed into place)
//   train.tokens       token ids, uint32 little-endian, all training documents back to back (EOS after each);
//                      in a conversation cache the tokens that are not trained (prompts, padding) carry
//                      kUntrainedTokenBit; packed, each block holds whole conversations, the first token of
//                      each (and of the padding after the last) carrying kDocumentStartBit; unpacked, each
//                      conversation is padded to block_size
//   train.blocks       block start offsets into train.tokens, uint64 little-endian, ascending; each block
//                      is the block_size tokens from there
//   validation.tokens  the same for the validation documents
//   validation.blocks
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/status.h"

namespace slipway::data {

inline constexpr const char* kTokenCacheMagic = "slipway.token-cache";
// 2: conversations and their labels; 3: packed; 4: a text document starts with the tokenizer's BOS where it
// adds one (special_tokens.h)
inline constexpr int64_t kTokenCacheFormatVersion = 4;
// Set on a token id that is not trained (vocabularies stay far below 2^30): the labels ride in the ids.
inline constexpr uint32_t kUntrainedTokenBit = 0x80000000u;
// Set on the first token of each document of a packed block: attention and positions restart there.
inline constexpr uint32_t kDocumentStartBit = 0x40000000u;
inline constexpr uint32_t kTokenIdMask = ~(kUntrainedTokenBit | kDocumentStartBit);
inline constexpr const char* kTokenCacheMetaFile = "meta.json";

enum class Split { kTrain = 0, kValidation = 1 };
const char* split_name(Split split);        // "train" | "validation"
std::string tokens_file_name(Split split);  // "train.tokens"
std::string blocks_file_name(Split split);  // "train.blocks"

struct SplitCounts {
    uint64_t documents = 0;
    uint64_t tokens = 0;           // in <split>.tokens (EOS included)
    uint64_t blocks = 0;           // in <split>.blocks
    uint64_t tokens_dropped = 0;   // in no block
    uint64_t tokens_repeated = 0;  // in two blocks; blocks * block_size == tokens - dropped + repeated
    uint64_t trained_tokens = 0;   // tokens without kUntrainedTokenBit (all of them in a text cache)
    uint64_t padding_tokens = 0;   // conversations: tokens that fill blocks up to block_size
};

// One file the cache was made from.
struct CacheInput {
    std::string role;  // train | validation | tokenizer | tokenizer_config | chat_template
    std::string path;  // absolute
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    uint64_t xxh64 = 0;  // content hash
};

struct CacheMeta {
    int64_t format_version = kTokenCacheFormatVersion;
    std::string engine_version;
    std::string key;      // the folder name: hex hash of the inputs and settings
    std::string created;  // UTC, ISO 8601
    // Settings.
    int64_t block_size = 0;
    std::string split_mode;  // document | paragraph | concat
    bool dedup = false;
    std::string text_field;
    std::string data_format = "text";                   // text | messages | sharegpt | alpaca
    std::string train_on;                               // conversations: assistant | all | last_assistant
    bool packed = false;                                // conversations: several a block (kDocumentStartBit)
    std::optional<double> validation_split_percentage;  // set when validation came from train_file
    std::optional<int64_t> seed;                        // likewise
    int64_t eos_token_id = 0;
    // Text documents: the ids each starts with (the tokenizer's BOS where it adds one), and why.
    std::vector<int64_t> document_prefix_ids;
    std::string document_prefix_source;
    uint64_t vocab_size = 0;
    std::vector<CacheInput> inputs;
    // Counts.
    uint64_t documents_read = 0;  // good documents in all input files, before dedup
    uint64_t duplicates_removed = 0;
    uint64_t bad_lines_skipped = 0;
    uint64_t conversations_truncated = 0;  // longer than block_size, cut (data.truncation)
    uint64_t conversations_dropped = 0;    // longer than block_size, left out (data.truncation drop)
    SplitCounts train;
    SplitCounts validation;

    const SplitCounts& counts(Split split) const { return split == Split::kTrain ? train : validation; }
    SplitCounts& counts(Split split) { return split == Split::kTrain ? train : validation; }
    bool conversations() const { return data_format != "text"; }
};

nlohmann::ordered_json meta_to_json(const CacheMeta& meta);
// Checks the magic and the format version; errors name `file` and the field.
Result<CacheMeta> meta_from_json(const nlohmann::json& json, const std::string& file);

}  // namespace slipway::data
