// chat_setup.h: tokenizer_config.json / chat_template.jinja reading and conversation rendering.
#include "chat/chat_setup.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "contract/run_config.h"

namespace slipway::chat {
namespace {

// A special token as tokenizer_config.json writes it: a string, or an AddedToken {"content": ...}.
std::string token_text(const nlohmann::json& config, const char* key) {
    const auto it = config.find(key);
    if (it == config.end()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
        return (*it)["content"].get<std::string>();
    return {};
}

// chat_template as a string, or the "default" entry of a list of {"name", "template"}.
Result<std::string> template_text(const nlohmann::json& value, const std::string& where) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_array()) {
        for (const nlohmann::json& entry : value) {
            if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
                entry["template"].is_string())
                return entry["template"].get<std::string>();
        }
        return Status::Error(where + ": chat_template: no template named \"default\" in the list");
    }
    return Status::Error(where + ": chat_template must be a string or a list of {name, template}");
}

}  // namespace

Result<ChatSetup> read_chat_setup(const std::string& model_dir, const std::string& template_file) {
    ChatSetup setup;
    const std::string config_path = model_dir + "/tokenizer_config.json";
    nlohmann::json config = nlohmann::json::object();
    if (std::filesystem::exists(config_path)) {
        Result<nlohmann::json> read = read_json_file(config_path);
        if (!read.ok()) return read.status();
        if (!read->is_object()) return Status::Error(config_path + ": must be a JSON object");
        config = std::move(*read);
    }
    setup.bos_token = token_text(config, "bos_token");
    setup.eos_token = token_text(config, "eos_token");
    std::string text;
    const std::string jinja_path = model_dir + "/chat_template.jinja";
    if (!template_file.empty()) {
        std::ifstream in(template_file);
        if (!in) return Status::Error(template_file + ": cannot read the chat template");
        std::ostringstream buffer;
        buffer << in.rdbuf();
        text = buffer.str();
        setup.source = template_file;
    } else if (config.contains("chat_template") && !config["chat_template"].is_null()) {
        Result<std::string> t = template_text(config["chat_template"], config_path);
        if (!t.ok()) return t.status();
        text = *t;
        setup.source = config_path;
    } else if (std::ifstream in(jinja_path); in) {
        std::ostringstream buffer;
        buffer << in.rdbuf();
        text = buffer.str();
        setup.source = jinja_path;
    } else {
        return Status::Error(StatusCode::kNotFound,
                             model_dir +
                                 ": no chat template (neither tokenizer_config.json's chat_template nor "
                                 "chat_template.jinja); --chat needs one");
    }
    Result<ChatTemplate> parsed = parse_chat_template(text);
    if (!parsed.ok()) return Status::Error(setup.source + ": chat_template: " + parsed.error());
    setup.chat_template = std::move(*parsed);
    return setup;
}

Result<std::string> render_conversation(const ChatSetup& setup, const nlohmann::json& messages,
                                        bool add_generation_prompt) {
    if (!messages.is_array() || messages.empty())
        return Status::Error("messages must be a non-empty list of {\"role\", \"content\"}");
    for (size_t i = 0; i < messages.size(); ++i) {
        const nlohmann::json& m = messages[i];
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
            return Status::Error("messages[" + std::to_string(i) + "]: needs a string \"role\"");
    }
    return render_messages(setup, messages, add_generation_prompt);
}

Result<std::string> render_messages(const ChatSetup& setup, const nlohmann::json& messages,
                                    bool add_generation_prompt) {
    nlohmann::json context = {{"messages", messages},
                              {"add_generation_prompt", add_generation_prompt},
                              {"bos_token", setup.bos_token},
                              {"eos_token", setup.eos_token}};
    Result<std::string> prompt = render(setup.chat_template, context);
    if (!prompt.ok()) return Status::Error(setup.source + ": chat_template: " + prompt.error());
    return prompt;
}

}  // namespace slipway::chat
