// decoding.h: prefill, then one token at a time through the KV cache.
#include "model/decoding.h"

#include <torch/torch.h>

#include <algorithm>

namespace slipway::model {

std::vector<int64_t> decode_tokens(LlamaForCausalLM& model, const std::vector<int64_t>& prompt,
                                   int64_t max_new_tokens, const NextToken& next, const AcceptToken& accept,
                                   const UnitHook& hook) {
    torch::NoGradGuard no_grad;
    const auto prompt_tokens = static_cast<int64_t>(prompt.size());
    const int64_t budget = std::min(max_new_tokens, model->config.max_position_embeddings - prompt_tokens);
    std::vector<int64_t> out;
    if (budget <= 0 || prompt.empty()) return out;
    const torch::Device device = model->model->embed_tokens->weight.device();
    const auto as_ids = torch::TensorOptions().dtype(torch::kInt64);
    KvCache cache = model->make_cache(1, prompt_tokens + budget);
    torch::Tensor input = torch::tensor(prompt, as_ids).unsqueeze(0).to(device);  // (1, T)
    while (true) {
        const torch::Tensor logits =
            model->next_token_logits(input, cache, hook).cpu().contiguous();  // (1, V)
        const int64_t id = next(logits.data_ptr<float>(), logits.size(1));
        out.push_back(id);
        if (!accept(id) || static_cast<int64_t>(out.size()) >= budget) break;
        input = torch::tensor({id}, as_ids).view({1, 1}).to(device);  // (1, 1)
    }
    return out;
}

}  // namespace slipway::model
