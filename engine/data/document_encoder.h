// Turns one JSONL line into the token ids of its document: parse, take the text field, check it, hash
// it for dedup, tokenize (paragraph by paragraph in paragraph mode, so each paragraph start is a token
// boundary) and append EOS. Pure and thread-safe: the prepare pipeline runs it on every worker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/boundaries.h"
#include "tokenizer/tokenizer.h"

namespace slipway::data {

struct DocumentEncoderOptions {
    const tokenizer::Tokenizer* tokenizer = nullptr;
    std::string text_field = "text";
    SplitMode mode = SplitMode::kDocument;
    uint32_t eos_token_id = 0;
    bool hash_text = false;  // fill EncodedDocument::hash (for dedup)
};

struct EncodedDocument {
    std::string error;             // non-empty: a bad line, and why (without the file and line)
    uint64_t hash = 0;             // document_hash() of the text, when asked for
    std::vector<uint32_t> tokens;  // the document's ids, then EOS
    std::vector<uint32_t> starts;  // paragraph mode: token offsets (> 0) where a paragraph starts
};

// Bad lines: invalid JSON, invalid UTF-8, not an object, the field missing, not a string, or empty
// (only whitespace).
void encode_document(std::string_view line, const DocumentEncoderOptions& options, EncodedDocument& out);

}  // namespace slipway::data
