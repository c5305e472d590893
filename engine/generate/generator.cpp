// generator.h: prefill, then decode one token at a time through the KV cache.
#include "generate/generator.h"

#include <algorithm>
#include <chrono>

#include "generate/text_stream.h"
#include "model/decoding.h"

namespace slipway::generate {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<Generation> generate(model::LlamaForCausalLM& model, const tokenizer::Tokenizer& tokenizer,
                            const std::vector<int64_t>& prompt, const GenerateOptions& options,
                            const TextSink& on_text) {
    const int64_t limit = model->config.max_position_embeddings;
    const auto prompt_tokens = static_cast<int64_t>(prompt.size());
    if (prompt.empty()) return Status::Error("the prompt has no tokens");
    if (prompt_tokens >= limit) {
        return Status::Error("the prompt has " + std::to_string(prompt_tokens) +
                             " tokens: no room to generate under the model's max_position_embeddings (" +
                             std::to_string(limit) + ")");
    }
    Generation out;
    out.prompt_tokens = prompt_tokens;
    TextStream stream(tokenizer, prompt, options.stop_strings);
    TokenSampler sampler(options.sampling);
    auto emit = [&on_text](const std::string& delta) {
        if (on_text && !delta.empty()) on_text(delta);
    };
    Status failure = Status::Ok();
    auto start = std::chrono::steady_clock::now();
    size_t seen = 0;
    out.ids = model::decode_tokens(
        model, prompt, options.max_new_tokens,
        [&sampler](const float* logits, int64_t vocab) { return sampler.next(logits, vocab); },
        [&](int64_t id) {
            if (++seen == 1) {
                out.prefill_seconds = seconds_since(start);
                start = std::chrono::steady_clock::now();
            }
            if (std::find(options.eos_ids.begin(), options.eos_ids.end(), id) != options.eos_ids.end()) {
                out.finish_reason = "eos";
                return false;
            }
            Result<TextStream::Update> update = stream.push(id);
            if (!update.ok()) {
                failure = update.status();
                return false;
            }
            emit(update->delta);
            if (update->stopped) {
                out.finish_reason = "stop";
                out.stop_string = stream.stop_string();
                return false;
            }
            return true;
        });
    if (!failure.ok()) return failure;
    if (out.finish_reason.empty()) out.finish_reason = "length";
    if (out.ids.size() > 1) out.decode_seconds = seconds_since(start);
    emit(stream.finish());
    out.text = stream.text();
    return out;
}

}  // namespace slipway::generate
