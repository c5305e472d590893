// Turns one JSONL line into the token ids of its document: parse, take the text field, check it, hash
// it for dedup, tokenize (paragraph by paragraph in paragraph mode, so each paragraph start is a token
// boundary) with the special tokens the tokenizer adds (its BOS first, where it adds one) and append EOS. A
// conversation line is read in its format, rendered by the chat template and tokenized
// (conversation_encoder.h), cut to block_size as data.truncation says, its untrained tokens marked with
// kUntrainedTokenBit, and (unless packed later) padded to block_size, the padding untrained. Pure and
// thread-safe: the prepare pipeline runs it on every worker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_setup.h"
#include "data/boundaries.h"
#include "data/conversation.h"
#include "data/conversation_encoder.h"
#include "tokenizer/tokenizer.h"

namespace slipway::data {

struct DocumentEncoderOptions {
    const tokenizer::Tokenizer* tokenizer = nullptr;
    std::string text_field = "text";
    SplitMode mode = SplitMode::kDocument;
    uint32_t eos_token_id = 0;
    bool hash_text = false;  // fill EncodedDocument::hash (for dedup)
    // Conversations (format other than text): the template, what is trained, the block size and what
    // happens past it (drop | truncate_right | truncate_left); padding is eos_token_id, untrained.
    DataFormat format = DataFormat::kText;
    const chat::ChatSetup* chat = nullptr;
    TrainOn train_on = TrainOn::kAssistant;
    uint64_t block_size = 0;
    std::string truncation = "drop";
    bool pad_to_block = true;  // false: the conversation's own tokens only (ConversationPacker pads)
};

struct EncodedDocument {
    std::string error;             // non-empty: a bad line, and why (without the file and line)
    uint64_t hash = 0;             // document_hash() of the text, when asked for
    std::vector<uint32_t> tokens;  // the tokenizer's prefix (BOS), the document's ids, then EOS
    std::vector<uint32_t> starts;  // paragraph mode: token offsets (> 0) where a paragraph starts
    uint64_t trained = 0;          // tokens without kUntrainedTokenBit
    uint64_t padding = 0;          // of those tokens, the padding up to block_size
    bool truncated = false;        // a conversation cut to block_size
    bool dropped = false;          // a conversation left out (too long under drop, or nothing left to train)
};

// Bad lines: invalid JSON, invalid UTF-8, not an object, the field missing, not a string, or empty
// (only whitespace).
void encode_document(std::string_view line, const DocumentEncoderOptions& options, EncodedDocument& out);

}  // namespace slipway::data
