// generator.h: prefill, then decode one token at a time through the KV cache.
#include "generate/generator.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "generate/text_stream.h"

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
    torch::NoGradGuard no_grad;
    Generation out;
    out.prompt_tokens = prompt_tokens;
    const int64_t budget = std::min(options.max_new_tokens, limit - prompt_tokens);
    if (budget <= 0) {
        out.finish_reason = "length";
        return out;
    }
    const torch::Device device = model->model->embed_tokens->weight.device();
    const auto as_ids = torch::TensorOptions().dtype(torch::kInt64);
    model::KvCache cache = model->make_cache(1, prompt_tokens + budget);
    TextStream stream(tokenizer, prompt, options.stop_strings);
    TokenSampler sampler(options.sampling);
    auto emit = [&on_text](const std::string& delta) {
        if (on_text && !delta.empty()) on_text(delta);
    };

    auto start = std::chrono::steady_clock::now();
    torch::Tensor input = torch::tensor(prompt, as_ids).unsqueeze(0).to(device);  // (1, T)
    while (true) {
        const torch::Tensor logits = model->next_token_logits(input, cache).cpu().contiguous();  // (1, V)
        const int64_t id = sampler.next(logits.data_ptr<float>(), logits.size(1));
        out.ids.push_back(id);
        if (out.ids.size() == 1) {
            out.prefill_seconds = seconds_since(start);
            start = std::chrono::steady_clock::now();
        }
        if (std::find(options.eos_ids.begin(), options.eos_ids.end(), id) != options.eos_ids.end()) {
            out.finish_reason = "eos";
            break;
        }
        Result<TextStream::Update> update = stream.push(id);
        if (!update.ok()) return update.status();
        emit(update->delta);
        if (update->stopped) {
            out.finish_reason = "stop";
            out.stop_string = stream.stop_string();
            break;
        }
        if (static_cast<int64_t>(out.ids.size()) >= budget) {
            out.finish_reason = "length";
            break;
        }
        input = torch::tensor({id}, as_ids).view({1, 1}).to(device);  // (1, 1)
    }
    if (out.ids.size() > 1) out.decode_seconds = seconds_since(start);
    emit(stream.finish());
    out.text = stream.text();
    return out;
}

}  // namespace slipway::generate
