// TextStream: the text of generated tokens as they arrive, for streaming and stop strings (no torch).
// Each new token's text is what decoding the prompt's last tokens plus all new tokens adds after the
// prompt's own text (so a SentencePiece "▁word" keeps its space, as HF's pipelines decode it); a delta is
// held back while it ends in an incomplete UTF-8 sequence (U+FFFD from a byte split across tokens) or in
// what could be the start of a stop string. A stop string ends the text before it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "contract/status.h"
#include "tokenizer/tokenizer.h"

namespace slipway::generate {

class TextStream {
public:
    // `prompt`: the prompt's ids (its last few are the decoding context); special tokens are not text.
    TextStream(const tokenizer::Tokenizer& tokenizer, const std::vector<int64_t>& prompt,
               std::vector<std::string> stop_strings);

    struct Update {
        std::string delta;     // text that became final with this token (may be empty)
        bool stopped = false;  // a stop string appeared: the text ends before it
    };
    // Adds one generated token. Errors: an id the tokenizer does not know.
    [[nodiscard]] Result<Update> push(int64_t id);
    // At the end (EOS, length): whatever was held back, except an incomplete UTF-8 tail's U+FFFD.
    std::string finish();

    const std::string& text() const { return text_; }  // all final text so far
    const std::string& stop_string() const { return matched_stop_; }

private:
    Result<std::string> decoded() const;  // the new tokens' text as it stands

    const tokenizer::Tokenizer& tokenizer_;
    std::vector<int32_t> ids_;  // context (the prompt's tail) + new tokens
    size_t context_size_ = 0;
    std::string context_text_;
    std::vector<std::string> stop_strings_;
    std::string text_;  // emitted so far
    std::string matched_stop_;
    bool stopped_ = false;
};

}  // namespace slipway::generate
