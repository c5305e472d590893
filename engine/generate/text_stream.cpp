// text_stream.h: incremental detokenization with held-back tails and stop strings.
#include "generate/text_stream.h"

#include <algorithm>

namespace slipway::generate {
namespace {

// Prompt tokens decoded with the new ones: enough for a leading-space rule to see a word before them.
constexpr size_t kContextTokens = 4;
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD: a byte sequence not complete yet

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The length of the longest suffix of `text` that is a proper prefix of one of `stops`.
size_t stop_prefix_length(std::string_view text, const std::vector<std::string>& stops) {
    size_t longest = 0;
    for (const std::string& stop : stops) {
        for (size_t n = std::min(text.size(), stop.size() - 1); n > longest; --n) {
            if (text.substr(text.size() - n) == std::string_view(stop).substr(0, n)) {
                longest = n;
                break;
            }
        }
    }
    return longest;
}

}  // namespace

TextStream::TextStream(const tokenizer::Tokenizer& tokenizer, const std::vector<int64_t>& prompt,
                       std::vector<std::string> stop_strings)
    : tokenizer_(tokenizer) {
    for (std::string& stop : stop_strings) {
        if (!stop.empty()) stop_strings_.push_back(std::move(stop));
    }
    const size_t begin = prompt.size() > kContextTokens ? prompt.size() - kContextTokens : 0;
    for (size_t i = begin; i < prompt.size(); ++i)
        ids_.push_back(static_cast<int32_t>(prompt[i]));
    context_size_ = ids_.size();
    Result<std::string> context = tokenizer_.decode(ids_, /*skip_special_tokens=*/true);
    if (context.ok()) {
        context_text_ = *context;
    } else {  // an id the tokenizer lacks in the prompt: decode the new tokens alone
        ids_.clear();
        context_size_ = 0;
    }
}

Result<std::string> TextStream::decoded() const {
    Result<std::string> all = tokenizer_.decode(ids_, /*skip_special_tokens=*/true);
    if (!all.ok()) return all.status();
    if (all->compare(0, context_text_.size(), context_text_) == 0) return all->substr(context_text_.size());
    // The context's text is not a prefix (a decoder that rewrites across tokens): the new tokens alone.
    return tokenizer_.decode(
        std::vector<int32_t>(ids_.begin() + static_cast<std::ptrdiff_t>(context_size_), ids_.end()), true);
}

Result<TextStream::Update> TextStream::push(int64_t id) {
    Update update;
    if (stopped_) {
        update.stopped = true;
        return update;
    }
    ids_.push_back(static_cast<int32_t>(id));
    Result<std::string> all = decoded();
    if (!all.ok()) return all.status();
    // Text once emitted is final: a decoder may only append to it.
    std::string pending = all->size() > text_.size() && all->compare(0, text_.size(), text_) == 0
                              ? all->substr(text_.size())
                              : std::string();
    // A stop string anywhere in the unemitted text, or straddling the emitted end.
    for (const std::string& stop : stop_strings_) {
        const size_t from = text_.size() >= stop.size() ? text_.size() - stop.size() + 1 : 0;
        const std::string window = text_.substr(from) + pending;
        const size_t at = window.find(stop);
        if (at == std::string::npos) continue;
        const size_t cut = from + at;  // in text_ + pending
        if (cut >= text_.size()) {
            update.delta = pending.substr(0, cut - text_.size());
            text_ += update.delta;
        }
        pending.clear();
        matched_stop_ = stop;
        stopped_ = update.stopped = true;
        return update;
    }
    if (ends_with(pending, kReplacement)) return update;  // wait for the rest of the character
    const size_t hold = stop_prefix_length(text_ + pending, stop_strings_);
    const size_t emit = pending.size() > hold ? pending.size() - hold : 0;
    update.delta = pending.substr(0, emit);
    text_ += update.delta;
    return update;
}

std::string TextStream::finish() {
    if (stopped_) return {};
    std::string rest;
    Result<std::string> all = decoded();
    if (all.ok() && all->size() > text_.size() && all->compare(0, text_.size(), text_) == 0)
        rest = all->substr(text_.size());
    while (ends_with(rest, kReplacement))  // generation ended inside a character
        rest.resize(rest.size() - kReplacement.size());
    text_ += rest;
    return rest;
}

}  // namespace slipway::generate
