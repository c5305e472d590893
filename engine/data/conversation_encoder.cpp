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

Result<EncodedConversation> encode_conversation(const Conversation& conversation,
                                                const chat::ChatSetup& setup,
                                                const tokenizer::Tokenizer& tokenizer, TrainOn train_on) {
    const size_t turns = conversation.turns.size();
    Result<std::string> whole = chat::render_messages(setup, conversation.messages(), false);
    if (!whole.ok()) return whole.status();
    Result<std::vector<int32_t>> ids = tokenizer.encode_checked(*whole, /*add_special_tokens=*/false);
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
        Result<std::string> prefix = chat::render_messages(setup, conversation.messages(i), true);
        if (!prefix.ok()) return prefix.status();
        Result<std::vector<int32_t>> prefix_ids = tokenizer.encode_checked(*prefix, false);
        if (!prefix_ids.ok()) return prefix_ids.status();
        const size_t start = static_cast<size_t>(
            std::mismatch(prefix_ids->begin(), prefix_ids->end(), out.ids.begin(), out.ids.end()).first -
            prefix_ids->begin());
        size_t end = start;  // inclusive: the end-of-turn marker, or the last token
        while (end < out.ids.size() && special.count(out.ids[end]) == 0)
            ++end;
        if (end == out.ids.size()) end = out.ids.size() - 1;
        if (start >= out.ids.size())
            return Status::Error("turn " + std::to_string(i) +
                                 " (assistant) renders to no tokens after its prompt");
        std::copy(out.ids.begin() + static_cast<std::ptrdiff_t>(start),
                  out.ids.begin() + static_cast<std::ptrdiff_t>(end) + 1,
                  out.labels.begin() + static_cast<std::ptrdiff_t>(start));
    }
    return out;
}

}  // namespace slipway::data
