// Text generation with a model's KV cache: the prompt in one forward, then one token per forward, until an
// EOS id, a stop string or the token limit; the text streams out through a callback as it becomes final.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "contract/status.h"
#include "generate/sampling.h"
#include "model/llama.h"
#include "tokenizer/tokenizer.h"

namespace slipway::generate {

struct GenerateOptions {
    int64_t max_new_tokens = 256;
    SamplingOptions sampling;
    std::vector<std::string> stop_strings;
    std::vector<int64_t> eos_ids;  // any of them ends the text (generation_config.json's eos_token_id)
};

struct Generation {
    std::vector<int64_t> ids;   // the new tokens, the EOS that ended them included
    std::string text;           // their text, without special tokens, cut before a stop string
    std::string finish_reason;  // eos | stop | length
    std::string stop_string;    // the one that matched (finish_reason stop)
    int64_t prompt_tokens = 0;
    double prefill_seconds = 0;  // the prompt's forward and the first token
    double decode_seconds = 0;   // every later token
};

// Called with each piece of final text, in order; their concatenation is Generation::text.
using TextSink = std::function<void(const std::string& delta)>;

// prompt: token ids (at least one). The model must be in eval mode; runs without autograd on its device.
// Errors: an empty prompt, one that leaves no room under max_position_embeddings, an id the tokenizer lacks.
[[nodiscard]] Result<Generation> generate(model::LlamaForCausalLM& model,
                                          const tokenizer::Tokenizer& tokenizer,
                                          const std::vector<int64_t>& prompt, const GenerateOptions& options,
                                          const TextSink& on_text = nullptr);

}  // namespace slipway::generate
