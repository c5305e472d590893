// A conversation as the ids and labels a chat fine-tune trains on: rendered by the model's chat template
// and tokenized as transformers' apply_chat_template(messages, tokenize=True) does, with a label per token
// that is the token's id where it is trained and -100 (ignored by the loss) elsewhere.
//
// A trained span is what an assistant turn renders to: it starts after the tokens of the conversation up to
// that turn rendered with add_generation_prompt (so the "assistant" header is not trained) and runs through
// the first special token after the turn's content, the template's end-of-turn marker (<|eot_id|>,
// <|im_end|>, </s>, ...), not what the template prints after it. The content is located by rendering the
// conversation again with it emptied. Where the prompt's tokens are not a prefix of the conversation's (a
// template that renders the system prompt into the last user turn, as Mistral-Nemo's, or a merge across the
// boundary), the span starts where the content does.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "chat/chat_setup.h"
#include "contract/status.h"
#include "data/conversation.h"
#include "tokenizer/tokenizer.h"

namespace slipway::data {

inline constexpr int32_t kIgnoredLabel = -100;

// Which turns are trained: every assistant turn, every token, or the last assistant turn only.
enum class TrainOn { kAssistant, kAll, kLastAssistant };
[[nodiscard]] Result<TrainOn> train_on_named(std::string_view name);  // assistant | all | last_assistant
const char* train_on_name(TrainOn train_on);

struct EncodedConversation {
    std::vector<int32_t> ids;
    std::vector<int32_t> labels;  // ids[i] where trained, kIgnoredLabel elsewhere; as long as ids
    size_t trained() const;
};

// Errors: the template's (rendering), the tokenizer's, or a turn that renders to no tokens to train.
[[nodiscard]] Result<EncodedConversation> encode_conversation(const Conversation& conversation,
                                                              const chat::ChatSetup& setup,
                                                              const tokenizer::Tokenizer& tokenizer,
                                                              TrainOn train_on);

}  // namespace slipway::data
