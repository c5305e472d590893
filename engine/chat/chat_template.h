// Chat templates: a Jinja interpreter for the subset of Jinja2 that Hugging Face chat templates use (Llama 3,
// Mistral, Qwen, Saiga), rendering them as transformers' apply_chat_template does (trim_blocks,
// lstrip_blocks, raise_exception, tojson as json.dumps). Torch-free; checked against python3-jinja2 in
// tests/chat.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "contract/status.h"

namespace slipway::chat {

struct TemplateNode;  // the parsed body (template_ast.h)

// A parsed template. Cheap to copy; immutable once parsed.
struct ChatTemplate {
    std::string source;
    std::shared_ptr<const TemplateNode> body;
};

// Parses `source` (the chat_template string of tokenizer_config.json). Errors name the line and column.
[[nodiscard]] Result<ChatTemplate> parse_chat_template(std::string_view source);

// Renders with `context` as the template's variables: messages (list of {role, content, ...}),
// add_generation_prompt, bos_token, eos_token, tools, ... A variable the context lacks is Jinja's
// undefined (false, prints as ""). Errors name the line and column of the failing expression; a
// raise_exception(msg) call fails with "raise_exception: msg". nlohmann::json sorts object keys, so objects
// print (tojson) and iterate in key order here.
[[nodiscard]] Result<std::string> render(const ChatTemplate& chat_template, const nlohmann::json& context);

// The same, keeping the context's object key order as Python dicts (and so transformers) do: use this when
// the template prints objects, e.g. the tools' JSON schemas, and the prompt must equal transformers' tokens.
[[nodiscard]] Result<std::string> render_ordered(const ChatTemplate& chat_template,
                                                 const nlohmann::ordered_json& context);

}  // namespace slipway::chat
