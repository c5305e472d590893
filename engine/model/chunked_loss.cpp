// chunked_cross_entropy: a custom autograd function that makes the logits one chunk of rows at a time
// and, when a gradient is wanted, also computes d loss / d h and d loss / d w from that same chunk right
// away: d loss / d logits = (softmax - onehot) / N, so backward only scales them by the incoming gradient
// and the (N, V) logits are neither kept nor recomputed (one lm_head matmul fewer than recomputing).
#include "model/chunked_loss.h"

#include <torch/torch.h>

#include "model/torch_compat.h"

namespace slipway::model {
namespace {

// One pass over the rows. Returns the summed loss; fills grad_h (N, C) and grad_w (V, C) where given and
// defined (the gradients for an upstream gradient of 1), and *correct when asked.
double loss_and_gradients(const torch::Tensor& h, const torch::Tensor& w32, const torch::Tensor& targets,
                          int64_t chunk_rows, int64_t* correct, torch::Tensor* grad_h,
                          torch::Tensor* grad_w) {
    const int64_t n = h.size(0);
    const double inv_n = 1.0 / static_cast<double>(n);
    double total = 0;
    int64_t hits = 0;
    for (int64_t begin = 0; begin < n; begin += chunk_rows) {
        const int64_t end = std::min(n, begin + chunk_rows);
        const torch::Tensor h_c = h.slice(0, begin, end).to(torch::kFloat32);  // (n_c, C)
        const torch::Tensor t = targets.slice(0, begin, end).unsqueeze(1);     // (n_c, 1)
        const torch::Tensor logits = torch::mm(h_c, w32.t());                  // (n_c, V)
        if (correct != nullptr) hits += logits.argmax(1).eq(t.squeeze(1)).sum().item<int64_t>();
        torch::Tensor logp = torch::log_softmax(logits, 1);  // (n_c, V): logits - logsumexp
        total -= logp.gather(1, t).sum().item<double>();
        const bool want_h = grad_h != nullptr && grad_h->defined();
        const bool want_w = grad_w != nullptr && grad_w->defined();
        if (!want_h && !want_w) continue;
        torch::Tensor g = logp.exp_();                                           // softmax (n_c, V), in place
        g.scatter_add_(1, t, torch::full({end - begin, 1}, -1.0, g.options()));  // - onehot
        // The 1 / N of the mean is applied as the matmuls' alpha and to the small (n_c, C) product.
        if (want_h) {
            torch::Tensor gh = grad_h->slice(0, begin, end);
            if (gh.scalar_type() == torch::kFloat32) {
                torch::mm_out(gh, g, w32).mul_(inv_n);  // (n_c, C)
            } else {
                gh.copy_(torch::mm(g, w32).mul_(inv_n));
            }
        }
        if (want_w) grad_w->addmm_(g.t(), h_c, /*beta=*/begin == 0 ? 0.0 : 1.0, /*alpha=*/inv_n);  // (V, C)
    }
    if (correct != nullptr) *correct = hits;
    return total;
}

class ChunkedCrossEntropy : public torch::autograd::Function<ChunkedCrossEntropy> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& h,
                                 const torch::Tensor& w, const torch::Tensor& targets, int64_t chunk_rows,
                                 int64_t* correct) {
        // correct == nullptr: the caller does not need the argmax hits (training steps).
        NoAutocast fp32_logits;  // logits and loss in fp32 even inside a bf16 autocast region
        const torch::Tensor w32 = w.to(torch::kFloat32);
        // (N, C) and (V, C); undefined where that input is frozen (LoRA: the head), so its product is
        // skipped.
        torch::Tensor grad_h = h.requires_grad() ? torch::empty_like(h) : torch::Tensor();
        torch::Tensor grad_w = w.requires_grad() ? torch::empty_like(w32) : torch::Tensor();
        const double total = loss_and_gradients(h, w32, targets, chunk_rows, correct, &grad_h, &grad_w);
        ctx->saved_data["grad_h"] = grad_h;
        ctx->saved_data["grad_w"] = grad_w;
        ctx->saved_data["w_dtype"] = static_cast<int64_t>(w.scalar_type());
        return torch::tensor(total / static_cast<double>(h.size(0)), h.options().dtype(torch::kFloat32));
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grad_outputs) {
        torch::Tensor grad_h = ctx->saved_data["grad_h"].toTensor();
        torch::Tensor grad_w = ctx->saved_data["grad_w"].toTensor();
        const auto w_dtype = static_cast<torch::ScalarType>(ctx->saved_data["w_dtype"].toInt());
        ctx->saved_data.clear();  // backward runs once: the gradients move out
        const torch::Tensor scale = grad_outputs[0].to(torch::kFloat32);
        // The usual upstream gradient is exactly 1 (the loss itself); skip the multiply then (CPU only:
        // reading the value back is a device sync elsewhere).
        const bool unit = scale.device().is_cpu() && scale.item<float>() == 1.0f;
        if (!unit) {
            if (grad_h.defined()) grad_h = grad_h * scale.to(grad_h.scalar_type());
            if (grad_w.defined()) grad_w = grad_w * scale;
        }
        if (grad_w.defined() && grad_w.scalar_type() != w_dtype) grad_w = grad_w.to(w_dtype);
        return {grad_h, grad_w, torch::Tensor(), torch::Tensor(), torch::Tensor()};
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
    chunk_rows = std::max<int64_t>(1, chunk_rows);
    if (!torch::GradMode::is_enabled() || !(h.requires_grad() || w.requires_grad())) {
        // Evaluation and scoring: the loss alone, no gradient buffers.
        torch::NoGradGuard no_grad;
        NoAutocast fp32_logits;
        const double total = loss_and_gradients(h, w.to(torch::kFloat32), targets, chunk_rows,
                                                count_correct ? &out.correct : nullptr, nullptr, nullptr);
        out.loss = torch::tensor(total / static_cast<double>(h.size(0)), h.options().dtype(torch::kFloat32));
        return out;
    }
    out.loss = ChunkedCrossEntropy::apply(h, w, targets, chunk_rows, count_correct ? &out.correct : nullptr);
    return out;
}

}  // namespace slipway::model
