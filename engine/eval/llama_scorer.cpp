// make_llama_scorer (llama_scorer.h): token log-probabilities, and greedy decoding through the KV cache.
#include <torch/torch.h>

#include "eval/llama_scorer.h"
#include "model/decoding.h"

#include <algorithm>

namespace slipway::eval {
namespace {

class LlamaScorer : public ScoringModel {
public:
    LlamaScorer(model::LlamaForCausalLM& model, c10::Device device, ShardedScoring sharded)
        : model_(model), device_(device), sharded_(std::move(sharded)) {}

    int64_t max_length() const override { return model_->config.max_position_embeddings; }

    std::vector<int32_t> eos_ids() const override {
        std::vector<int32_t> ids;
        for (int64_t id : model_->config.eos_token_ids)
            ids.push_back(static_cast<int32_t>(id));
        return ids;
    }

    TokenScores score(const std::vector<int32_t>& ids, size_t first) override {
        torch::NoGradGuard no_grad;
        const auto n = static_cast<int64_t>(ids.size());
        const torch::Tensor all = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()), torch::kInt64);
        const torch::Tensor input = all.slice(0, 0, n - 1).unsqueeze(0).to(device_);  // (1, T), T = n - 1
        const auto from = static_cast<int64_t>(first) - 1;  // logits at t predict ids[t + 1]
        torch::Tensor all_logits;                           // (1, T, V)
        if (sharded_.hook) {  // unit by unit through a KV cache of this input's length
            model::KvCache cache = model_->make_cache(1, input.size(1));
            all_logits = model_->cached_logits(input, cache, sharded_.hook);
        } else {
            all_logits = model_->logits(input);
        }
        const torch::Tensor logits = all_logits.squeeze(0).slice(0, from).to(torch::kFloat32);  // (S, V)
        const torch::Tensor targets = all.slice(0, from + 1).to(device_);                       // (S)
        const torch::Tensor logprobs =
            torch::log_softmax(logits, -1).gather(1, targets.unsqueeze(1)).squeeze(1);  // (S)
        TokenScores s;
        s.logprob_sum = logprobs.to(torch::kFloat64).sum().item<double>();
        s.tokens = targets.size(0);
        s.greedy = logits.argmax(-1).eq(targets).all().item<bool>();
        return s;
    }

    // Through the KV cache (model/decoding.h), as `generate` decodes.
    std::vector<int32_t> greedy(const GreedyRequest& request) override {
        std::vector<int32_t> new_ids;
        if (request.prompt.empty()) return new_ids;
        const std::vector<int64_t> prompt(request.prompt.begin(), request.prompt.end());
        model::decode_tokens(
            model_, prompt, request.max_new_tokens,
            [this](const float* logits, int64_t vocab) {
                const int64_t id = std::max_element(logits, logits + vocab) - logits;
                return sharded_.agree ? sharded_.agree(id) : id;
            },
            [&](int64_t id) {
                const auto next = static_cast<int32_t>(id);
                if (std::find(request.eos_ids.begin(), request.eos_ids.end(), next) != request.eos_ids.end())
                    return false;
                new_ids.push_back(next);
                return !(request.stop && request.stop(new_ids));
            },
            sharded_.hook);
        return new_ids;
    }

private:
    model::LlamaForCausalLM& model_;
    c10::Device device_;
    ShardedScoring sharded_;
};

}  // namespace

std::unique_ptr<ScoringModel> make_llama_scorer(model::LlamaForCausalLM& model, c10::Device device,
                                                ShardedScoring sharded) {
    return std::make_unique<LlamaScorer>(model, device, std::move(sharded));
}

}  // namespace slipway::eval
