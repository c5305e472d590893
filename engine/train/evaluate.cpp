// evaluate_share (evaluate.h): this rank's validation blocks once, in order, without gradients.
#include "train/evaluate.h"

#include <torch/torch.h>

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

EvalSums evaluate_share(const BatchLoss& loss, const data::TokenCache& cache, int64_t batch_size,
                        int64_t rank, int64_t world_size, torch::Device device, bool every_rank_in_step) {
    torch::NoGradGuard no_grad;
    const size_t n = cache.num_blocks(data::Split::kValidation);
    std::vector<uint64_t> order;
    for (size_t i = static_cast<size_t>(rank); i < n; i += static_cast<size_t>(world_size))
        order.push_back(i);
    const auto batch = static_cast<size_t>(batch_size);
    const size_t longest_share = (n + static_cast<size_t>(world_size) - 1) / static_cast<size_t>(world_size);
    const size_t batches = ((every_rank_in_step ? longest_share : order.size()) + batch - 1) / batch;
    EvalSums sums;
    for (size_t b = 0; b < batches; ++b) {
        const size_t begin = b * batch;
        if (begin >= order.size()) {  // this rank's share is done: keep the others company, drop the result
            const std::vector<uint64_t> first{0};
            (void)loss(load_batch(cache, data::Split::kValidation, first, 0, 1, device));
            continue;
        }
        const size_t count = std::min(batch, order.size() - begin);
        const model::LossResult l =
            loss(load_batch(cache, data::Split::kValidation, order, begin, count, device));
        sums.loss_sum += l.loss.item<double>() * static_cast<double>(l.tokens);
        sums.tokens += static_cast<double>(l.tokens);
        sums.correct += static_cast<double>(l.correct);
        sums.samples += static_cast<double>(count);
    }
    return sums;
}

EvalSums evaluate_share(model::LlamaForCausalLM& model, const data::TokenCache& cache, int64_t batch_size,
                        int64_t rank, int64_t world_size, torch::Device device) {
    model->eval();
    const EvalSums sums = evaluate_share(
        [&model](const Batch& b) {
            return model::causal_lm_loss(model, b.ids, true, b.trained, b.documents);
        },
        cache, batch_size, rank, world_size, device, /*every_rank_in_step=*/false);
    model->train();
    return sums;
}

}  // namespace slipway::train
