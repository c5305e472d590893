// evaluate (evaluate.h): every validation block once, in order, without gradients.
#include "train/evaluate.h"

#include <numeric>

#include <torch/torch.h>

#include "train/batches.h"

namespace slipway::train {

EvalResult evaluate(model::LlamaForCausalLM& model, const data::TokenCache& cache, int64_t batch_size) {
    torch::NoGradGuard no_grad;
    model->eval();
    const size_t n = cache.num_blocks(data::Split::kValidation);
    std::vector<uint64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    EvalResult r;
    double loss_sum = 0;
    int64_t correct = 0;
    for (size_t begin = 0; begin < n; begin += static_cast<size_t>(batch_size)) {
        const size_t count = std::min(static_cast<size_t>(batch_size), n - begin);
        const torch::Tensor ids = make_batch(cache, data::Split::kValidation, order, begin, count);  // (B, T)
        const model::LossResult l = model::causal_lm_loss(model, ids);
        loss_sum += l.loss.item<double>() * static_cast<double>(l.tokens);
        r.tokens += l.tokens;
        correct += l.correct;
        r.samples += static_cast<int64_t>(count);
    }
    model->train();
    if (r.tokens > 0) {
        r.loss = loss_sum / static_cast<double>(r.tokens);
        r.token_accuracy = static_cast<double>(correct) / static_cast<double>(r.tokens);
    }
    return r;
}

}  // namespace slipway::train
