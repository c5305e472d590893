// make_llama_scorer (llama_scorer.h): token log-probabilities and the full-recompute greedy loop.
#include <torch/torch.h>

#include "eval/llama_scorer.h"

#include <algorithm>

namespace slipway::eval {
namespace {

class LlamaScorer : public ScoringModel {
public:
    LlamaScorer(model::LlamaForCausalLM& model, c10::Device device) : model_(model), device_(device) {}

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
        const torch::Tensor logits =
            model_->logits(input).squeeze(0).slice(0, from).to(torch::kFloat32);  // (S, V), S = n - first
        const torch::Tensor targets = all.slice(0, from + 1).to(device_);         // (S)
        const torch::Tensor logprobs =
            torch::log_softmax(logits, -1).gather(1, targets.unsqueeze(1)).squeeze(1);  // (S)
        TokenScores s;
        s.logprob_sum = logprobs.to(torch::kFloat64).sum().item<double>();
        s.tokens = targets.size(0);
        s.greedy = logits.argmax(-1).eq(targets).all().item<bool>();
        return s;
    }

    // Full recompute: every new token runs the model over the whole sequence again. To be replaced by the
    // KV-cache decoder of `generate`.
    std::vector<int32_t> greedy(const GreedyRequest& request) override {
        torch::NoGradGuard no_grad;
        std::vector<int64_t> sequence(request.prompt.begin(), request.prompt.end());
        std::vector<int32_t> new_ids;
        while (static_cast<int64_t>(new_ids.size()) < request.max_new_tokens &&
               static_cast<int64_t>(sequence.size()) < max_length()) {
            const torch::Tensor input =
                torch::tensor(sequence, torch::kInt64).unsqueeze(0).to(device_);        // (1, T)
            const torch::Tensor last = model_->logits(input).select(1, -1).squeeze(0);  // (V)
            const auto next = static_cast<int32_t>(last.argmax().item<int64_t>());
            if (std::find(request.eos_ids.begin(), request.eos_ids.end(), next) != request.eos_ids.end())
                break;
            sequence.push_back(next);
            new_ids.push_back(next);
            if (request.stop && request.stop(new_ids)) break;
        }
        return new_ids;
    }

private:
    model::LlamaForCausalLM& model_;
    c10::Device device_;
};

}  // namespace

std::unique_ptr<ScoringModel> make_llama_scorer(model::LlamaForCausalLM& model, c10::Device device) {
    return std::make_unique<LlamaScorer>(model, device);
}

}  // namespace slipway::eval
