// chunked_cross_entropy: a custom autograd function that makes the logits one chunk of rows at a time
// and, when a gradient is wanted, also computes d loss / d h and d loss / d w from that same chunk right
// away: d loss / d logits = (softmax - onehot) / N, so backward only scales them by the incoming gradient
// and the (N, V) logits are neither kept nor recomputed (one lm_head matmul fewer than recomputing).
#include "model/chunked_loss.h"

#include <torch/torch.h>

#include "model/torch_compat.h"

namespace slipway::model {
namespace {

// The precision of the head's products. kFloat32: fp32 GEMMs (CPU, and fp32 runs: exact). kBFloat16
// (training on a GPU under bf16, HF's recipe): bf16 GEMMs with fp32 accumulation, the log-softmax and
// the loss in fp32, chunked by bytes rather than rows, and no host sync: the loss stays on the device.
struct HeadPlan {
    torch::ScalarType dtype = torch::kFloat32;
    int64_t chunk_rows = 256;
};

// Rows per chunk on a GPU: the chunk's bf16 logits, their fp32 log-softmax and gradient (~10 bytes per
// logit) within kChunkBytes, so a 128k vocabulary takes ~400 rows a chunk and a 32k one ~1,700: products
// still large enough for the GPU, and little added to the step's peak (the loss runs at it).
HeadPlan plan_head(const torch::Tensor& h, int64_t vocab, int64_t chunk_rows, HeadPrecision precision) {
    HeadPlan plan;
    plan.chunk_rows = std::max<int64_t>(1, chunk_rows);
    const bool gpu_bf16 =
        h.device().is_cuda() && (bf16_autocast_active(torch::kCUDA) || h.scalar_type() == torch::kBFloat16);
    if (precision == HeadPrecision::kFloat32 || (precision == HeadPrecision::kAuto && !gpu_bf16)) return plan;
    plan.dtype = torch::kBFloat16;
    if (precision == HeadPrecision::kBFloat16) return plan;  // forced (tests): their chunk size as given
    constexpr int64_t kChunkBytes = int64_t{1} << 29;
    plan.chunk_rows = std::max<int64_t>(256, kChunkBytes / (10 * std::max<int64_t>(vocab, 1)));
    return plan;
}

// The summed loss and argmax hits of the chunks: on the host in double for CPU tensors (one value per
// chunk, exact and cheap there), on the device otherwise (read once, by whoever needs the number).
struct Totals {
    explicit Totals(const torch::Device& device) : on_device(!device.is_cpu()) {}
    bool on_device;
    double loss = 0;
    int64_t hits = 0;
    torch::Tensor loss_t, hits_t;  // device scalars (fp64, int64)

    void add(const torch::Tensor& chunk_loss, const torch::Tensor* chunk_hits) {
        if (!on_device) {
            loss += chunk_loss.item<double>();
            if (chunk_hits != nullptr) hits += chunk_hits->item<int64_t>();
            return;
        }
        const torch::Tensor l = chunk_loss.to(torch::kFloat64);
        loss_t = loss_t.defined() ? loss_t + l : l;
        if (chunk_hits != nullptr) hits_t = hits_t.defined() ? hits_t + *chunk_hits : *chunk_hits;
    }
    // The mean loss over n targets as an fp32 scalar on `options`' device.
    torch::Tensor mean(int64_t n, const torch::TensorOptions& options) const {
        if (!on_device) return torch::tensor(loss / static_cast<double>(n), options.dtype(torch::kFloat32));
        return (loss_t / static_cast<double>(n)).to(torch::kFloat32);
    }
    int64_t correct() const { return on_device ? (hits_t.defined() ? hits_t.item<int64_t>() : 0) : hits; }
};

// One pass over the rows. Adds the summed loss to `totals`; fills grad_h (N, C) and grad_w (V, C) where
// given and defined (the gradients for an upstream gradient of 1), and the hits when `count` is set.
// w: the output weight already in plan.dtype.
void loss_and_gradients(const torch::Tensor& h, const torch::Tensor& w, const torch::Tensor& targets,
                        const HeadPlan& plan, bool count, Totals& totals, torch::Tensor* grad_h,
                        torch::Tensor* grad_w) {
    const int64_t n = h.size(0);
    const double inv_n = 1.0 / static_cast<double>(n);
    const bool want_h = grad_h != nullptr && grad_h->defined();
    const bool want_w = grad_w != nullptr && grad_w->defined();
    for (int64_t begin = 0; begin < n; begin += plan.chunk_rows) {
        const int64_t end = std::min(n, begin + plan.chunk_rows);
        const torch::Tensor h_c = h.slice(0, begin, end).to(plan.dtype);    // (n_c, C)
        const torch::Tensor t = targets.slice(0, begin, end).unsqueeze(1);  // (n_c, 1)
        // (n_c, V): fp32, or bf16 products (fp32 accumulation) widened for the softmax
        const torch::Tensor logits = torch::mm(h_c, w.t()).to(torch::kFloat32);
        torch::Tensor hits;
        if (count) hits = logits.argmax(1).eq(t.squeeze(1)).sum();
        torch::Tensor logp = torch::log_softmax(logits, 1);  // (n_c, V): logits - logsumexp
        totals.add(-logp.gather(1, t).sum(), count ? &hits : nullptr);
        if (!want_h && !want_w) continue;
        torch::Tensor g = logp.exp_();                                           // softmax (n_c, V), in place
        g.scatter_add_(1, t, torch::full({end - begin, 1}, -1.0, g.options()));  // - onehot
        if (plan.dtype != torch::kFloat32) {
            // The 1 / N folded in before rounding to bf16, as autocast's backward of HF's head would see it.
            const torch::Tensor g_low = g.mul_(inv_n).to(plan.dtype);             // (n_c, V)
            if (want_h) grad_h->slice(0, begin, end).copy_(torch::mm(g_low, w));  // (n_c, C)
            if (want_w) {
                const torch::Tensor gw = torch::mm(g_low.t(), h_c);  // (V, C) in bf16, accumulated in fp32
                if (begin == 0)
                    grad_w->copy_(gw);
                else
                    grad_w->add_(gw);
            }
            continue;
        }
        // The 1 / N of the mean is applied as the matmuls' alpha and to the small (n_c, C) product.
        if (want_h) {
            torch::Tensor gh = grad_h->slice(0, begin, end);
            if (gh.scalar_type() == torch::kFloat32) {
                torch::mm_out(gh, g, w).mul_(inv_n);  // (n_c, C)
            } else {
                gh.copy_(torch::mm(g, w).mul_(inv_n));
            }
        }
        if (want_w) grad_w->addmm_(g.t(), h_c, /*beta=*/begin == 0 ? 0.0 : 1.0, /*alpha=*/inv_n);  // (V, C)
    }
}

class ChunkedCrossEntropy : public torch::autograd::Function<ChunkedCrossEntropy> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& h,
                                 const torch::Tensor& w, const torch::Tensor& targets, int64_t chunk_rows,
                                 int64_t* correct, int64_t precision) {
        // correct == nullptr: the caller does not need the argmax hits (training steps).
        const HeadPlan plan =  // before autocast is left
            plan_head(h, w.size(0), chunk_rows, static_cast<HeadPrecision>(precision));
        NoAutocast explicit_dtypes;  // the head's dtypes are set here, not by an autocast region
        const torch::Tensor w_c = w.to(plan.dtype);
        // (N, C) and (V, C); undefined where that input is frozen (LoRA: the head), so its product is
        // skipped.
        torch::Tensor grad_h = h.requires_grad() ? torch::empty_like(h) : torch::Tensor();
        torch::Tensor grad_w =
            w.requires_grad() ? torch::empty(w.sizes(), w.options().dtype(torch::kFloat32)) : torch::Tensor();
        Totals totals(h.device());
        loss_and_gradients(h, w_c, targets, plan, correct != nullptr, totals, &grad_h, &grad_w);
        if (correct != nullptr) *correct = totals.correct();
        ctx->saved_data["grad_h"] = grad_h;
        ctx->saved_data["grad_w"] = grad_w;
        ctx->saved_data["w_dtype"] = static_cast<int64_t>(w.scalar_type());
        return totals.mean(h.size(0), h.options());
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
        return {grad_h, grad_w, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

ChunkedLoss chunked_cross_entropy(const torch::Tensor& h, const torch::Tensor& w,
                                  const torch::Tensor& targets, int64_t chunk_rows, bool count_correct,
                                  HeadPrecision precision) {
    ChunkedLoss out;
    // Small logits (a small model's step): one fused cross_entropy costs fewer ops than the chunked
    // function, and memory is no concern below this size.
    constexpr int64_t kSmallLogits = int64_t{1} << 21;  // 8 MiB of fp32
    if (h.size(0) * w.size(0) <= kSmallLogits && precision == HeadPrecision::kAuto) {
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
    if (!torch::GradMode::is_enabled() || !(h.requires_grad() || w.requires_grad())) {
        // Evaluation and scoring: the loss alone, no gradient buffers, in fp32 on every device (scores are
        // compared with fp32 heads; the cost is no training step's).
        torch::NoGradGuard no_grad;
        NoAutocast fp32_logits;
        HeadPlan plan;
        plan.chunk_rows = std::max<int64_t>(1, chunk_rows);
        Totals totals(h.device());
        loss_and_gradients(h, w.to(torch::kFloat32), targets, plan, count_correct, totals, nullptr, nullptr);
        out.loss = totals.mean(h.size(0), h.options());
        if (count_correct) out.correct = totals.correct();
        return out;
    }
    out.loss = ChunkedCrossEntropy::apply(h, w, targets, chunk_rows, count_correct ? &out.correct : nullptr,
                                          static_cast<int64_t>(precision));
    return out;
}

}  // namespace slipway::model
