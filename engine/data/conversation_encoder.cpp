// conversation_encoder.h: one render and one tokenization of the whole conversation, then one of the prefix
// before each trained assistant turn.
#include "data/conversation_encoder.h"

#include <algorithm>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace slipway::data {
Result<TrainOn> train_on_named(std::string_view name) {
    if (name == "assistant") return TrainOn::kAssistant;
    if (name == "all") return TrainOn::kAll;
    if (name == "last_assistant") return TrainOn::kLastAssistant;
    return Status::Error("unknown train_on \"" + std::string(name) +
                         "\" (expected assistant, all or last_assistant)");
}

const char* train_on_name(TrainOn train_on) {
    switch (train_on) {
        case TrainOn::kAssistant:
            return "assistant";
        case TrainOn::kAll:
            return "all";
        case TrainOn::kLastAssistant:
            return "last_assistant";
    }
    return "assistant";
}

size_t EncodedConversation::trained() const {
    return static_cast<size_t>(
        std::count_if(labels.begin(), labels.end(), [](int32_t l) { return l != kIgnoredLabel; }));
}

namespace {

// Renders and tokenizes `messages` (apply_chat_template(tokenize=True)).
Result<std::vector<int32_t>> render_ids(const chat::ChatSetup& setup, const tokenizer::Tokenizer& tokenizer,
                                        const nlohmann::json& messages, bool add_generation_prompt) {
    Result<std::string> text = chat::render_messages(setup, messages, add_generation_prompt);
    if (!text.ok()) return text.status();
    return tokenizer.encode_checked(*text, /*add_special_tokens=*/false);
}

// Where assistant turn `turn`'s content lies in `ids`: [begin, end) of the tokens that differ from the
// conversation rendered with that content emptied. Empty (begin == end == ids.size()) where nothing differs.
Result<std::pair<size_t, size_t>> content_range(const Conversation& c, size_t turn,
                                                const std::vector<int32_t>& ids, const chat::ChatSetup& setup,
                                                const tokenizer::Tokenizer& tokenizer) {
    Conversation emptied = c;
    emptied.turns[turn].content.clear();
    Result<std::vector<int32_t>> other = render_ids(setup, tokenizer, emptied.messages(), false);
    if (!other.ok()) return other.status();
    const size_t begin = static_cast<size_t>(
        std::mismatch(ids.begin(), ids.end(), other->begin(), other->end()).first - ids.begin());
    if (begin == ids.size()) return std::pair<size_t, size_t>{ids.size(), ids.size()};
    size_t suffix = 0;  // shared tail, not reaching into the shared head
    while (suffix < ids.size() - begin && suffix < other->size() - std::min(begin, other->size()) &&
           ids[ids.size() - 1 - suffix] == (*other)[other->size() - 1 - suffix])
        ++suffix;
    return std::pair<size_t, size_t>{begin, ids.size() - suffix};
}

}  // namespace

Result<EncodedConversation> encode_conversation(const Conversation& conversation,
                                                const chat::ChatSetup& setup,
                                                const tokenizer::Tokenizer& tokenizer, TrainOn train_on) {
    const size_t turns = conversation.turns.size();
    Result<std::vector<int32_t>> ids = render_ids(setup, tokenizer, conversation.messages(), false);
    if (!ids.ok()) return ids.status();
    EncodedConversation out;
    out.ids = std::move(*ids);
    if (train_on == TrainOn::kAll) {
        out.labels = out.ids;
        return out;
    }
    out.labels.assign(out.ids.size(), kIgnoredLabel);
    std::unordered_set<int32_t> special;
    for (const tokenizer::AddedToken& t : tokenizer.added_tokens()) {
        if (t.special) special.insert(t.id);
    }
    size_t last_assistant = turns;
    for (size_t i = 0; i < turns; ++i) {
        if (conversation.turns[i].role == "assistant") last_assistant = i;
    }
    for (size_t i = 0; i < turns; ++i) {
        if (conversation.turns[i].role != "assistant") continue;
        if (train_on == TrainOn::kLastAssistant && i != last_assistant) continue;
        Result<std::vector<int32_t>> prefix = render_ids(setup, tokenizer, conversation.messages(i), true);
        if (!prefix.ok()) return prefix.status();
        Result<std::pair<size_t, size_t>> content = content_range(conversation, i, out.ids, setup, tokenizer);
        if (!content.ok()) return content.status();
        // The turn starts after the generation prompt where the prompt's tokens begin the conversation's
        // (what the model is then to write includes any scaffolding before the content, e.g. Qwen3's think
        // block); else (a template that renders earlier turns differently once more follow, or a merge across
        // the boundary) where the content starts.
        const bool prefix_stable =
            prefix->size() <= out.ids.size() && std::equal(prefix->begin(), prefix->end(), out.ids.begin());
        size_t start = prefix_stable ? prefix->size() : content->first;
        if (start >= out.ids.size()) {
            if (prefix_stable || content->first == content->second)
                return Status::Error("turn " + std::to_string(i) +
                                     " (assistant) renders to no tokens after its prompt");
        }
        // Through the end-of-turn marker: the first special token from the content's end on.
        size_t end = std::max(start, content->first == content->second ? start : content->second);
        while (end < out.ids.size() && special.count(out.ids[end]) == 0)
            ++end;
        if (end == out.ids.size()) end = out.ids.size() - 1;
        std::copy(out.ids.begin() + static_cast<std::ptrdiff_t>(start),
                  out.ids.begin() + static_cast<std::ptrdiff_t>(end) + 1,
                  out.labels.begin() + static_cast<std::ptrdiff_t>(start));
    }
    return out;
}

}  // namespace slipway::data
