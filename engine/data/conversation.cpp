// conversation.h: one reader per shape, each naming the turn and the key it refuses.
#include "data/conversation.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace slipway::data {
namespace {

// ShareGPT's speaker names, and the OpenAI ones some ShareGPT exports use.
const char* sharegpt_role(const std::string& from) {
    if (from == "human" || from == "user") return "user";
    if (from == "gpt" || from == "assistant") return "assistant";
    if (from == "system") return "system";
    return nullptr;
}

Status check_roles(const Conversation& c) {
    for (const Turn& t : c.turns) {
        if (t.role == "assistant") return Status::Ok();
    }
    return Status::Error("no assistant turn: nothing to learn from");
}

// list_key's list of turns, each an object with role_key and content_key (a string each); `role` maps a
// speaker name to system | user | assistant, or null where unknown.
template <typename RoleOf>
Result<Conversation> read_turns(const nlohmann::json& line, const char* list_key, const char* role_key,
                                const char* content_key, const char* known_roles, RoleOf role) {
    const auto list = line.find(list_key);
    if (list == line.end()) return Status::Error(std::string("no \"") + list_key + "\" list");
    if (!list->is_array()) return Status::Error(std::string("\"") + list_key + "\" is not a list");
    if (list->empty()) return Status::Error(std::string("\"") + list_key + "\" is empty");
    Conversation c;
    for (size_t i = 0; i < list->size(); ++i) {
        const nlohmann::json& turn = (*list)[i];
        const std::string where = std::string(list_key) + "[" + std::to_string(i) + "]";
        if (!turn.is_object()) return Status::Error(where + " is not an object");
        const auto r = turn.find(role_key);
        if (r == turn.end() || !r->is_string())
            return Status::Error(where + ": no string \"" + role_key + "\"");
        const char* mapped = role(r->get<std::string>());
        if (mapped == nullptr)
            return Status::Error(where + ": unknown " + role_key + " " + r->dump() + " (expected " +
                                 known_roles + ")");
        const auto content = turn.find(content_key);
        if (content == turn.end()) return Status::Error(where + ": no \"" + content_key + "\"");
        if (!content->is_string())
            return Status::Error(where + ": \"" + content_key + "\" is not a string but " +
                                 content->type_name());
        c.turns.push_back({mapped, content->get<std::string>()});
    }
    if (Status s = check_roles(c); !s.ok()) return s;
    return c;
}

Result<std::string> string_field(const nlohmann::json& line, const char* key, bool required) {
    const auto it = line.find(key);
    if (it == line.end() || it->is_null()) {
        if (required) return Status::Error(std::string("no \"") + key + "\"");
        return std::string();
    }
    if (!it->is_string())
        return Status::Error(std::string("\"") + key + "\" is not a string but " + it->type_name());
    return it->get<std::string>();
}

Result<Conversation> read_alpaca(const nlohmann::json& line) {
    Result<std::string> instruction = string_field(line, "instruction", true);
    if (!instruction.ok()) return instruction.status();
    Result<std::string> input = string_field(line, "input", false);
    if (!input.ok()) return input.status();
    Result<std::string> output = string_field(line, "output", true);
    if (!output.ok()) return output.status();
    Result<std::string> system = string_field(line, "system", false);
    if (!system.ok()) return system.status();
    if (instruction->empty()) return Status::Error("\"instruction\" is empty");
    Conversation c;
    if (!system->empty()) c.turns.push_back({"system", *system});
    c.turns.push_back({"user", input->empty() ? *instruction : *instruction + "\n\n" + *input});
    c.turns.push_back({"assistant", *output});
    return c;
}

}  // namespace

Result<DataFormat> data_format_named(std::string_view name) {
    if (name == "text") return DataFormat::kText;
    if (name == "messages") return DataFormat::kMessages;
    if (name == "sharegpt") return DataFormat::kShareGpt;
    if (name == "alpaca") return DataFormat::kAlpaca;
    return Status::Error("unknown data format \"" + std::string(name) +
                         "\" (expected auto, text, messages, sharegpt or alpaca)");
}

const char* data_format_name(DataFormat format) {
    switch (format) {
        case DataFormat::kText:
            return "text";
        case DataFormat::kMessages:
            return "messages";
        case DataFormat::kShareGpt:
            return "sharegpt";
        case DataFormat::kAlpaca:
            return "alpaca";
    }
    return "text";
}

Result<DataFormat> detect_data_format(const nlohmann::json& line, const std::string& text_field,
                                      std::string* found) {
    const auto say = [found](const char* what) {
        if (found != nullptr) *found = what;
    };
    if (!line.is_object()) return Status::Error("the first line is not a JSON object");
    if (line.contains("messages")) {
        say("a \"messages\" list (OpenAI/HF chat)");
        return DataFormat::kMessages;
    }
    if (line.contains("conversations")) {
        say("a \"conversations\" list (ShareGPT)");
        return DataFormat::kShareGpt;
    }
    if (line.contains("instruction") && line.contains("output")) {
        say("\"instruction\" and \"output\" (Alpaca)");
        return DataFormat::kAlpaca;
    }
    // Anything else is plain text: a line without text_field is then refused by the text reader, naming it.
    if (found != nullptr)
        *found = line.contains(text_field) ? "a \"" + text_field + "\" field (plain text)"
                                           : "none of \"messages\", \"conversations\" or \"instruction\" + "
                                             "\"output\" (plain text from \"" +
                                                 text_field + "\")";
    return DataFormat::kText;
}

nlohmann::json Conversation::messages(size_t count) const {
    nlohmann::json list = nlohmann::json::array();
    for (size_t i = 0; i < std::min(count, turns.size()); ++i)
        list.push_back({{"role", turns[i].role}, {"content", turns[i].content}});
    return list;
}

Result<Conversation> parse_conversation(const nlohmann::json& line, DataFormat format) {
    if (!line.is_object()) return Status::Error("not a JSON object");
    switch (format) {
        case DataFormat::kMessages:
            return read_turns(line, "messages", "role", "content", "system, user or assistant",
                              [](const std::string& r) -> const char* {
                                  if (r == "system") return "system";
                                  if (r == "user") return "user";
                                  if (r == "assistant") return "assistant";
                                  return nullptr;
                              });
        case DataFormat::kShareGpt:
            return read_turns(line, "conversations", "from", "value", "human, gpt or system", sharegpt_role);
        case DataFormat::kAlpaca:
            return read_alpaca(line);
        case DataFormat::kText:
            break;
    }
    return Status::Error("plain text is not a conversation format");
}

}  // namespace slipway::data
