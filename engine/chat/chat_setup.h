// A model folder's chat setup as transformers reads it: the chat template (tokenizer_config.json's
// chat_template, a string or the list of named templates, or the chat_template.jinja file newer versions
// save beside it) and the bos/eos token strings the template may print; and the prompt it renders for a
// conversation, as apply_chat_template(messages, add_generation_prompt=True) does.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "contract/status.h"

namespace slipway::chat {

struct ChatSetup {
    ChatTemplate chat_template;
    std::string bos_token, eos_token;  // "" where tokenizer_config.json has none
    std::string source;                // where the template came from, for errors
};

// `slipway-engine generate --chat` exits with this code when the model has no chat template (sysexits'
// EX_CONFIG), so a client (the app's Chat page) falls back to plain text on the code, not on stderr's words.
inline constexpr int kExitNoChatTemplate = 78;

// Errors name the file; a folder with no chat template at all fails with StatusCode::kNotFound. With
// `template_file`, the
// template is that file's text instead (the bos/eos strings still come from the folder's
// tokenizer_config.json, where there is one).
[[nodiscard]] Result<ChatSetup> read_chat_setup(const std::string& model_dir,
                                                const std::string& template_file = "");

// messages: [{"role": ..., "content": ...}, ...] (checked: a list of objects with string roles).
[[nodiscard]] Result<std::string> render_conversation(const ChatSetup& setup, const nlohmann::json& messages,
                                                      bool add_generation_prompt = true);
// The same without the checks, for a conversation's leading turns (possibly none) that a caller has checked.
[[nodiscard]] Result<std::string> render_messages(const ChatSetup& setup, const nlohmann::json& messages,
                                                  bool add_generation_prompt);

}  // namespace slipway::chat
