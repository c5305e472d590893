// chunked_cross_entropy: a custom autograd function that keeps only the per-row logsumexp (N floats) and
// recomputes each chunk's logits in backward: d loss / d logits = (softmax - onehot) / N.
#include "model/chunked_loss.h"

#include <torch/torch.h>

#include "model/torch_compat.h"

namespace slipway::model {
namespace {

class ChunkedCrossEntropy : public torch::autograd::Function<ChunkedCrossEntropy> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& h,
                                 const torch::Tensor& w, const torch::Tensor& targets, int64_t chunk_rows,
                                 int64_t* correct) {
        // correct == nullptr: the caller does not need the argmax hits (training steps).
        NoAutocast fp32_logits;  // logits and loss in fp32 even inside a bf16 autocast region
        const int64_t n = h.size(0);
        torch::Tensor lse = torch::empty({n}, h.options().dtype(torch::kFloat32));
        double total = 0;
        int64_t hits = 0;
        const torch::Tensor w32 = w.to(torch::kFloat32);
        for (int64_t begin = 0; begin < n; begin += chunk_rows) {
            const int64_t end = std::min(n, begin + chunk_rows);
            const torch::Tensor logits =
                torch::matmul(h.slice(0, begin, end).to(torch::kFloat32), w32.t());  // (n_c, V)
            const torch::Tensor chunk_lse = torch::logsumexp(logits, 1);             // (n_c)
            const torch::Tensor t = targets.slice(0, begin, end);
            const torch::Tensor target_logits = logits.gather(1, t.unsqueeze(1)).squeeze(1);
            total += (chunk_lse - target_logits).sum().item<double>();
            if (correct != nullptr) hits += logits.argmax(1).eq(t).sum().item<int64_t>();
            lse.slice(0, begin, end).copy_(chunk_lse);
        }
        if (correct != nullptr) *correct = hits;
        ctx->save_for_backward({h, w, targets, lse});
        ctx->saved_data["chunk_rows"] = chunk_rows;
        return torch::tensor(total / static_cast<double>(n), h.options().dtype(torch::kFloat32));
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grad_outputs) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor& h = saved[0];
        const torch::Tensor& w = saved[1];
        const torch::Tensor& targets = saved[2];
        const torch::Tensor& lse = saved[3];
        const int64_t chunk_rows = ctx->saved_data["chunk_rows"].toInt();
        const int64_t n = h.size(0);
        const torch::Tensor w32 = w.to(torch::kFloat32);
        const torch::Tensor scale = grad_outputs[0].to(torch::kFloat32) / static_cast<double>(n);
        torch::Tensor grad_h = torch::empty_like(h);
        torch::Tensor grad_w = torch::zeros_like(w32);
        for (int64_t begin = 0; begin < n; begin += chunk_rows) {
            const int64_t end = std::min(n, begin + chunk_rows);
            const torch::Tensor h_c = h.slice(0, begin, end).to(torch::kFloat32);  // (n_c, C)
            torch::Tensor g = torch::exp(torch::matmul(h_c, w32.t()) -
                                         lse.slice(0, begin, end).unsqueeze(1));  // softmax (n_c, V)
            g.scatter_add_(1, targets.slice(0, begin, end).unsqueeze(1),
                           torch::full({end - begin, 1}, -1.0, g.options()));
            g.mul_(scale);
            grad_h.slice(0, begin, end).copy_(torch::matmul(g, w32));  // (n_c, C)
            grad_w.addmm_(g.t(), h_c);                                 // (V, C)
        }
        return {grad_h, grad_w.to(w.scalar_type()), torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

ChunkedLoss chunked_cross_entropy(const torch::Tensor& h, const torch::Tensor& w,
                                  const torch::Tensor& targets, int64_t chunk_rows, bool count_correct) {
    ChunkedLoss out;
    // Small logits (a small model's step): one fused cross_entropy costs fewer ops than the chunked
    // function, and memory is no concern below this size.
    constexpr int64_t kSmallLogits = int64_t{1} << 21;  // 8 MiB of fp32
    if (h.size(0) * w.size(0) <= kSmallLogits) {
        NoAutocast fp32_logits;
        const torch::Tensor logits =
            torch::matmul(h.to(torch::kFloat32), w.to(torch::kFloat32).t());  // (N, V)
        out.loss = torch::nn::functional::cross_entropy(logits, targets);
        if (count_correct) {
            torch::NoGradGuard no_grad;
            out.correct = logits.argmax(1).eq(targets).sum().item<int64_t>();
        }
        return out;
    }
    out.loss = ChunkedCrossEntropy::apply(h, w, targets, std::max<int64_t>(1, chunk_rows),
                                          count_correct ? &out.correct : nullptr);
    return out;
}

}  // namespace slipway::model
