// What `prepare` decides before reading any data: resolved paths, the digests of the inputs, where the
// EOS id comes from, and the cache key (a hash of everything that changes the cache's bytes), which
// names the cache folder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_setup.h"
#include "contract/run_config.h"
#include "contract/status.h"
#include "data/boundaries.h"
#include "data/conversation.h"
#include "data/conversation_encoder.h"
#include "data/document_encoder.h"
#include "data/token_cache_meta.h"
#include "tokenizer/tokenizer.h"

namespace slipway::data {

struct PreparePlan {
    std::string train_file;         // as configured (messages name files this way)
    std::string validation_file;    // as configured; empty: validation_split_percentage of train_file
    std::string tokenizer_file;     // tokenizer.path, or <model.path>/tokenizer.json
    std::string model_config_file;  // <model.path>/config.json (may not exist)
    std::string cache_dir;          // absolute: data.cache_dir, or <training.output_dir>/cache
    SplitMode mode = SplitMode::kDocument;
    uint64_t block_size = 0;
    bool dedup = false;
    std::string text_field;
    DataFormat format = DataFormat::kText;  // data.format, auto resolved by the train file's first line
    std::string format_found;               // with auto: what the first line has, in words
    // Conversations: what is trained, what happens past block_size, and the chat template (its file is an
    // input: it changes the ids).
    TrainOn train_on = TrainOn::kAssistant;
    std::string truncation = "drop";
    bool packing = false;  // several conversations a block (data.packing)
    chat::ChatSetup chat;
    std::optional<double> validation_split_percentage;  // set when validation_file is empty
    std::optional<int64_t> seed;                // set when documents are held out (> 0 %): it picks them
    std::optional<int64_t> model_eos_token_id;  // eos_token_id of the model's config.json
    std::vector<CacheInput> inputs;             // train, [validation], tokenizer, [chat_template]
    std::string key;                            // 16 hex digits of XXH64(cache_key_text)
    std::string cache_path;                     // <cache_dir>/<key>
};

// Resolves relative paths against the current folder and reads every input once for its hash (without
// `digest_inputs`, as a preview wants: the inputs are only checked to exist, and the key means nothing).
// Errors name the missing or unreadable file.
Result<PreparePlan> make_prepare_plan(const RunConfig& config, bool digest_inputs = true);

// The canonical text the key hashes: the cache format version, each data file's absolute path, size,
// mtime and content hash, the tokenizer's content hash, and every setting that changes the output.
std::string cache_key_text(const PreparePlan& plan);

// The model's eos_token_id (an int, or the first of a list) when <model.path>/config.json has one.
Result<std::optional<int64_t>> read_model_eos_token_id(const std::string& model_config_file);

// The EOS id: the model's, else the tokenizer's first token among <|end_of_text|>, <|endoftext|>, </s>,
// <|im_end|>, <eos>. `source` says which. Errors when neither has one or it is outside the vocabulary.
Result<uint32_t> resolve_eos_token_id(const PreparePlan& plan, const tokenizer::Tokenizer& tok,
                                      std::string* source);

// True when document `line_number` of train_file is held out for validation: a hash of the seed and the
// line number below validation_split_percentage of the 64-bit range (independent of threads and order).
// How the plan's lines are encoded (prepare, and the editor's preview): `tok` and `plan` must outlive it.
DocumentEncoderOptions encoder_options(const PreparePlan& plan, const tokenizer::Tokenizer& tok,
                                       uint32_t eos);

bool held_out_for_validation(uint64_t line_number, int64_t seed, double percentage);

}  // namespace slipway::data
