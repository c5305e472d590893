// evaluate_share (evaluate.h): this rank's validation blocks once, in order, without gradients.
#include "train/evaluate.h"

#include <torch/torch.h>

#include "train/batches.h"

namespace slipway::train {

EvalResult EvalSums::result() const {
    EvalResult r;
    r.tokens = static_cast<int64_t>(tokens);
    r.samples = static_cast<int64_t>(samples);
    if (tokens > 0) {
        r.loss = loss_sum / tokens;
        r.token_accuracy = correct / tokens;
    }
    return r;
}

EvalSums evaluate_share(model::LlamaForCausalLM& model, const data::TokenCache& cache, int64_t batch_size,
                        int64_t rank, int64_t world_size, torch::Device device) {
    torch::NoGradGuard no_grad;
    model->eval();
    const size_t n = cache.num_blocks(data::Split::kValidation);
    std::vector<uint64_t> order;
    for (size_t i = static_cast<size_t>(rank); i < n; i += static_cast<size_t>(world_size))
        order.push_back(i);
    EvalSums sums;
    for (size_t begin = 0; begin < order.size(); begin += static_cast<size_t>(batch_size)) {
        const size_t count = std::min(static_cast<size_t>(batch_size), order.size() - begin);
        const torch::Tensor ids =
            make_batch(cache, data::Split::kValidation, order, begin, count, device);  // (B, T)
        const model::LossResult l = model::causal_lm_loss(model, ids);
        sums.loss_sum += l.loss.item<double>() * static_cast<double>(l.tokens);
        sums.tokens += static_cast<double>(l.tokens);
        sums.correct += static_cast<double>(l.correct);
        sums.samples += static_cast<double>(count);
    }
    model->train();
    return sums;
}

}  // namespace slipway::train
