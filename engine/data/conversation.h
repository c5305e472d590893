// Conversations as training data: the JSONL shapes people bring (OpenAI/HF "messages", ShareGPT
// "conversations", Alpaca instruction/input/output), read into one list of {role, content} turns with roles
// system | user | assistant, and the format of a file told from the keys of its first line. Torch-free;
// errors say what is wrong with the line (the caller adds the file and line number).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"

namespace slipway::data {

// `text` is plain documents (one text field a line, every token trained); the others are conversations.
enum class DataFormat { kText, kMessages, kShareGpt, kAlpaca };

// "text" | "messages" | "sharegpt" | "alpaca" (not "auto": see detect_data_format).
[[nodiscard]] Result<DataFormat> data_format_named(std::string_view name);
const char* data_format_name(DataFormat format);

// The format a line's keys say: "messages" -> messages, "conversations" -> sharegpt, "instruction" and
// "output" -> alpaca, anything else text (read from `text_field`). `found` gets what decided it, in words,
// e.g. "a \"messages\" list". An error only for a line that is not an object.
[[nodiscard]] Result<DataFormat> detect_data_format(const nlohmann::json& line, const std::string& text_field,
                                                    std::string* found = nullptr);

struct Turn {
    std::string role;  // system | user | assistant
    std::string content;
};

struct Conversation {
    std::vector<Turn> turns;
    // The first `count` turns (all by default) as a chat template reads them: [{"role": ..., "content":
    // ...}].
    nlohmann::json messages(size_t count = static_cast<size_t>(-1)) const;
};

// One line of a conversation format. Refused: not an object, the list missing or empty, a turn that is not
// an object, an unknown role, a content (value) that is not a string, no assistant turn; for alpaca a
// missing or non-string instruction or output. Alpaca: an optional "system", then user = instruction, plus
// "\n\n" and input when input is not empty, and assistant = output.
[[nodiscard]] Result<Conversation> parse_conversation(const nlohmann::json& line, DataFormat format);

}  // namespace slipway::data
