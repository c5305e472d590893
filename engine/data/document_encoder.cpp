// One JSONL line -> document token ids (document_encoder.h).
#include "data/document_encoder.h"

#include <nlohmann/json.hpp>

#include "data/dedup.h"
#include "data/token_cache_meta.h"

namespace slipway::data {
namespace {

// nlohmann's messages end with "; last read: '<the token so far>'", which for a long string holds the
// whole string, raw bytes included. Keep the reason only, printable and short.
std::string describe_parse_error(const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    if (what.find("UTF-8") != std::string::npos) {
        return "invalid UTF-8 near byte " + std::to_string(e.byte) + " of the line";
    }
    const size_t last_read = what.find("; last read");
    if (last_read != std::string::npos) what.resize(last_read);
    const size_t bracket = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) what.erase(0, bracket + 2);
    if (what.size() > 200) what.resize(200);
    for (char& c : what) {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    return "invalid JSON: " + what;
}

bool only_whitespace(const std::string& text) {
    return text.find_first_not_of(" \t\n\r\v\f") == std::string::npos;
}

bool append_encoded(const tokenizer::Tokenizer& tok, std::string_view text, std::vector<uint32_t>& out,
                    std::string& error) {
    Result<std::vector<int32_t>> ids = tok.encode_checked(text, false);
    if (!ids.ok()) {
        error = ids.error();
        return false;
    }
    out.insert(out.end(), ids->begin(), ids->end());
    return true;
}

// One conversation: ids with untrained tokens marked, cut or dropped past block_size, padded to it if asked.
void encode_conversation_line(const nlohmann::json& doc, const DocumentEncoderOptions& o,
                              EncodedDocument& out) {
    Result<Conversation> conversation = parse_conversation(doc, o.format);
    if (!conversation.ok()) {
        out.error = conversation.error();
        return;
    }
    Result<EncodedConversation> encoded =
        encode_conversation(*conversation, *o.chat, *o.tokenizer, o.train_on);
    if (!encoded.ok()) {
        out.error = encoded.error();
        return;
    }
    if (o.hash_text) out.hash = document_hash(doc.dump());
    size_t begin = 0, end = encoded->ids.size();
    if (end > o.block_size) {
        if (o.truncation == "drop") {
            out.dropped = true;
            return;
        }
        out.truncated = true;
        if (o.truncation == "truncate_left")
            begin = end - o.block_size;
        else
            end = o.block_size;
    }
    for (size_t i = begin; i < end; ++i) {
        const bool trained = encoded->labels[i] != kIgnoredLabel;
        out.tokens.push_back(static_cast<uint32_t>(encoded->ids[i]) | (trained ? 0u : kUntrainedTokenBit));
        out.trained += trained ? 1 : 0;
    }
    if (out.trained == 0) {  // a cut that kept no answer
        out.tokens.clear();
        out.dropped = true;
        return;
    }
    if (o.pad_to_block) {
        out.padding = o.block_size - out.tokens.size();
        out.tokens.resize(o.block_size, o.eos_token_id | kUntrainedTokenBit);
    }
}

void encode(std::string_view line, const DocumentEncoderOptions& o, EncodedDocument& out) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(line.begin(), line.end());
    } catch (const nlohmann::json::parse_error& e) {
        out.error = describe_parse_error(e);
        return;
    }
    if (!doc.is_object()) {
        out.error = "expected a JSON object, got " + std::string(doc.type_name());
        return;
    }
    if (o.format != DataFormat::kText) {
        encode_conversation_line(doc, o, out);
        return;
    }
    const auto it = doc.find(o.text_field);
    if (it == doc.end()) {
        out.error = "missing field \"" + o.text_field + "\"";
        return;
    }
    if (!it->is_string()) {
        out.error = "field \"" + o.text_field + "\" is " + it->type_name() + ", not a string";
        return;
    }
    const std::string& text = it->get_ref<const std::string&>();
    if (only_whitespace(text)) {
        out.error = "field \"" + o.text_field + "\" is " + (text.empty() ? "empty" : "only whitespace");
        return;
    }
    if (o.hash_text) out.hash = document_hash(text);
    // The document as the tokenizer encodes it with its special tokens (special_tokens.h: a Llama 2 or
    // Llama 3.1 document starts with its BOS, as HF's tokenizer(text) gives it), then the EOS that ends it in
    // the concatenated stream, once where the tokenizer's own suffix already is that EOS.
    const tokenizer::SpecialTokens& special = o.tokenizer->special_tokens();
    out.tokens.insert(out.tokens.end(), special.prefix.begin(), special.prefix.end());
    if (o.mode == SplitMode::kParagraph) {
        const std::vector<size_t> starts = paragraph_starts(text);
        for (size_t i = 0; i < starts.size(); ++i) {
            const size_t end = i + 1 < starts.size() ? starts[i + 1] : text.size();
            if (i > 0) out.starts.push_back(static_cast<uint32_t>(out.tokens.size()));
            if (!append_encoded(*o.tokenizer, std::string_view(text).substr(starts[i], end - starts[i]),
                                out.tokens, out.error)) {
                return;
            }
        }
    } else if (!append_encoded(*o.tokenizer, text, out.tokens, out.error)) {
        return;
    }
    out.tokens.insert(out.tokens.end(), special.suffix.begin(), special.suffix.end());
    if (special.suffix.empty() || special.suffix.back() != static_cast<int32_t>(o.eos_token_id))
        out.tokens.push_back(o.eos_token_id);
    out.trained = out.tokens.size();
}

}  // namespace

void encode_document(std::string_view line, const DocumentEncoderOptions& options, EncodedDocument& out) {
    out.error.clear();
    out.hash = 0;
    out.tokens.clear();
    out.starts.clear();
    out.trained = 0;
    out.padding = 0;
    out.truncated = out.dropped = false;
    try {
        encode(line, options, out);
    } catch (const std::exception& e) {  // e.g. out of memory on a huge line: a bad line, not a crash
        out.error = std::string("cannot encode: ") + e.what();
    }
    if (!out.error.empty()) {
        out.tokens.clear();
        out.starts.clear();
    }
}

}  // namespace slipway::data
