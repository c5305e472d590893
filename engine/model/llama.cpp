// The LLaMA forward pass (llama.h), written straight through with shape comments, following HF's
// modeling_llama numerics (fp32 RMSNorm and RoPE tables, split-half rotation, repeat_kv for GQA); q/k/v
// and gate/up run as one product each over their concatenated weights, RMSNorm and RoPE on CPU in fp32 as
// custom autograd functions with plain loops, and on GPUs as the fused functions of fused_ops.h.
#include <algorithm>
#include <cmath>
#include <vector>

#include <torch/torch.h>

#include "model/adapted_linear.h"
#include "model/checkpointing.h"
#include "model/chunked_loss.h"
#include "model/fused_ops.h"
#include "model/llama.h"
#include "model/nf4_weight.h"
#include "model/torch_compat.h"

namespace slipway::model {
namespace {

// x: (..., D) -> (-x2, x1) with x1, x2 the two halves (split, whose backward is one cat).
torch::Tensor rotate_half(const torch::Tensor& x) {
    const std::vector<torch::Tensor> halves = x.chunk(2, -1);
    return torch::cat({-halves[1], halves[0]}, -1);
}

// HF's rotary embedding x cos + rotate_half(x) sin for fp32 on CPU as one loop each way instead of five
// ATen ops and their autograd nodes. x: (B, T, H, D) with unit stride along D; cos, sin: (T, D) or, one
// table row a token, (B, T, D), contiguous.
// Backward: dx = g cos + rotate_half^T(g sin), where rotate_half^T(u) = (u2, -u1).
class CpuRope : public torch::autograd::Function<CpuRope> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& cos, const torch::Tensor& sin) {
        torch::Tensor y = torch::empty(x.sizes(), x.options());  // (B, T, H, D) contiguous
        apply_rotation(x, cos, sin, y, /*transpose=*/false);
        ctx->saved_data["cos"] = cos;
        ctx->saved_data["sin"] = sin;
        return y;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const torch::Tensor g = grads[0].stride(3) == 1 ? grads[0] : grads[0].contiguous();
        torch::Tensor dx = torch::empty(g.sizes(), g.options());
        apply_rotation(g, ctx->saved_data["cos"].toTensor(), ctx->saved_data["sin"].toTensor(), dx,
                       /*transpose=*/true);
        return {dx, torch::Tensor(), torch::Tensor()};
    }

    static bool fits(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
        return x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && x.dim() == 4 &&
               x.stride(3) == 1 && x.size(3) % 2 == 0 && cos.scalar_type() == torch::kFloat32 &&
               cos.is_contiguous() && sin.is_contiguous() && cos.sizes() == sin.sizes() &&
               (cos.dim() == 2 ? cos.size(0) == x.size(1)
                               : cos.dim() == 3 && cos.size(0) == x.size(0) && cos.size(1) == x.size(1));
    }

private:
    // out (contiguous) = x cos + rotate_half(x) sin, or with transpose: x cos + rotate_half^T(x sin).
    static void apply_rotation(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                               torch::Tensor& out, bool transpose) {
        const int64_t bs = x.size(0), t = x.size(1), h = x.size(2), d = x.size(3), half = d / 2;
        const bool per_token = cos.dim() == 3;
        const float* xp = x.data_ptr<float>();
        const float* cp = cos.data_ptr<float>();
        const float* sp = sin.data_ptr<float>();
        float* op = out.data_ptr<float>();
        for (int64_t b = 0; b < bs; ++b) {
            for (int64_t i = 0; i < t; ++i) {
                const int64_t row = per_token ? b * t + i : i;
                const float *c = cp + row * d, *s = sp + row * d;
                for (int64_t j = 0; j < h; ++j) {
                    const float* xi = xp + b * x.stride(0) + i * x.stride(1) + j * x.stride(2);
                    float* o = op + ((b * t + i) * h + j) * d;
                    if (!transpose) {
                        for (int64_t k = 0; k < half; ++k)
                            o[k] = xi[k] * c[k] + -xi[k + half] * s[k];
                        for (int64_t k = half; k < d; ++k)
                            o[k] = xi[k] * c[k] + xi[k - half] * s[k];
                    } else {
                        for (int64_t k = 0; k < half; ++k)
                            o[k] = xi[k] * c[k] + xi[k + half] * s[k + half];
                        for (int64_t k = half; k < d; ++k)
                            o[k] = xi[k] * c[k] + -(xi[k - half] * s[k - half]);
                    }
                }
            }
        }
    }
};

// Weights that already lie one after the other in one buffer (the optimizer's flat buffers, a sharded
// unit's gathered buffer) as one (sum of rows, C) view instead of a concatenated copy: no copy per forward,
// and autograd keeps no second copy of the weights for backward. Backward splits the gradient by rows.
class AdjacentRows : public torch::autograd::Function<AdjacentRows> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, at::TensorList weights) {
        int64_t rows = 0;
        std::vector<int64_t> split;
        for (const torch::Tensor& w : weights) {
            rows += w.size(0);
            split.push_back(w.size(0));
        }
        ctx->saved_data["split"] = split;
        const torch::Tensor& first = weights[0];
        return first.detach().as_strided({rows, first.size(1)}, {first.size(1), 1});  // (sum rows, C)
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        return grads[0].split_with_sizes(ctx->saved_data["split"].toIntVector(), 0);
    }

    // Same dtype and device, contiguous, equal columns, each starting where the previous one ends.
    static bool applies(const std::vector<torch::Tensor>& weights) {
        for (size_t i = 0; i < weights.size(); ++i) {
            const torch::Tensor& w = weights[i];
            if (!w.defined() || w.dim() != 2 || !w.is_contiguous()) return false;
            if (i == 0) continue;
            const torch::Tensor& prev = weights[i - 1];
            if (w.scalar_type() != prev.scalar_type() || w.device() != prev.device() ||
                w.size(1) != prev.size(1) || !w.storage().is_alias_of(prev.storage()) ||
                w.storage_offset() != prev.storage_offset() + prev.numel())
                return false;
        }
        return true;
    }
};

// x W^T (+ b) + the adapters' terms for linear layers side by side, all adapted and without dropout, as one
// adapted_linear over the joint weight: the stacked A's [A_1; A_2; ...] (sum r, C) and the block-diagonal
// blockdiag(s_i B_i) (sum out, sum r). Undefined where it does not apply (dropout draws per adapter; a
// trained base).
torch::Tensor joint_adapted_linear(const torch::Tensor& x, const torch::Tensor& joint,
                                   const torch::Tensor& bias, std::initializer_list<LinearImpl*> layers) {
    if (!adapted_linear_applies(joint, bias)) return {};
    std::vector<torch::Tensor> a, b;
    for (LinearImpl* layer : layers) {
        if (!layer->has_lora() || layer->lora.dropout > 0) return {};
        a.push_back(layer->lora_A->weight);                          // (r_i, C)
        b.push_back(layer->lora_B->weight * layer->lora.scaling());  // (out_i, r_i)
    }
    return adapted_linear(x, joint, bias, torch::cat(a), torch::block_diag(b));
}

// x W^T (+ b) for linear layers side by side: one product over their concatenated weights (the parameters
// keep HF's names), plus each adapter's term where there is one (zeros elsewhere, so a zero adapter changes
// no bit). (B, T, C) -> (B, T, sum of outs)
torch::Tensor joint_linear(const torch::Tensor& x, std::initializer_list<LinearImpl*> layers) {
    std::vector<torch::Tensor> weights;
    bool adapted = false, biased = false, quantized = false;
    for (LinearImpl* layer : layers) {
        weights.push_back(layer->weight);
        adapted = adapted || layer->has_lora();
        biased = biased || layer->bias.defined();
        quantized = quantized || layer->quantized();
    }
    // One product per layer where a joint one would first copy the weights: NF4 weights (dequantized one by
    // one), and separate weights without autograd (decoding: a copy of the weights for every token).
    if (quantized || (!torch::GradMode::is_enabled() && !AdjacentRows::applies(weights))) {
        std::vector<torch::Tensor> outs;
        for (LinearImpl* layer : layers)
            outs.push_back(layer->forward(x));
        return torch::cat(outs, -1);
    }
    const torch::Tensor joint = AdjacentRows::applies(weights) ? AdjacentRows::apply(at::TensorList(weights))
                                                               : torch::cat(weights);  // (sum outs, C)
    torch::Tensor bias;
    if (biased) {
        std::vector<torch::Tensor> biases;  // (out) each; zeros for a layer without one
        for (LinearImpl* layer : layers)
            biases.push_back(layer->bias.defined() ? layer->bias
                                                   : torch::zeros({layer->out_features}, joint.options()));
        bias = torch::cat(biases);
    }
    if (adapted) {
        if (torch::Tensor fused = joint_adapted_linear(x, joint, bias, layers); fused.defined()) return fused;
    }
    // One linear as HF's F.linear: on GPUs the bias is added to the fp32 accumulator before the one rounding
    // to bf16 (an add after the product would round twice: Qwen2's q/k/v biases showed it).
    const torch::Tensor y = biased ? torch::linear(x, joint, bias) : torch::matmul(x, joint.t());
    if (!adapted) return y;
    std::vector<torch::Tensor> deltas;  // in layer order, as separate forwards would draw their dropout
    for (LinearImpl* layer : layers) {
        std::vector<int64_t> shape = y.sizes().vec();
        shape.back() = layer->out_features;
        deltas.push_back(layer->has_lora() ? layer->lora_delta(x).to(y.scalar_type())
                                           : torch::zeros(shape, y.options()));
    }
    return y + torch::cat(deltas, -1);
}

// HF's RMSNorm, weight * (x * rsqrt(mean(x^2) + eps)), for fp32 rows on CPU as two loops (forward, backward)
// instead of eight ATen ops and their autograd nodes: a small model's step is made of such overheads.
// x: (..., C), weight: (C). Backward: dx = r (w g - x_hat mean(w g x_hat)), dw = sum over rows of g x_hat.
class CpuRmsNorm : public torch::autograd::Function<CpuRmsNorm> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& weight, double eps) {
        const int64_t c = x.size(-1), rows = x.numel() / c;
        torch::Tensor y = torch::empty_like(x);
        torch::Tensor rstd = torch::empty({rows}, x.options());  // (rows)
        const float* xp = x.data_ptr<float>();
        const float* w = weight.data_ptr<float>();
        float* yp = y.data_ptr<float>();
        float* r = rstd.data_ptr<float>();
        const auto e = static_cast<float>(eps);
        for (int64_t i = 0; i < rows; ++i) {
            const float* xi = xp + i * c;
            double squares = 0;
            for (int64_t j = 0; j < c; ++j)
                squares += static_cast<double>(xi[j]) * xi[j];
            r[i] = 1.0f / std::sqrt(static_cast<float>(squares / static_cast<double>(c)) + e);
            float* yi = yp + i * c;
            for (int64_t j = 0; j < c; ++j)
                yi[j] = w[j] * (xi[j] * r[i]);
        }
        ctx->save_for_backward({x, weight, rstd});
        return y;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor &x = saved[0], &weight = saved[1], &rstd = saved[2];
        const torch::Tensor g = grads[0].contiguous();
        const int64_t c = x.size(-1), rows = x.numel() / c;
        torch::Tensor dx = torch::empty_like(x);
        std::vector<double> dw(static_cast<size_t>(c), 0.0);
        const float* xp = x.data_ptr<float>();
        const float* w = weight.data_ptr<float>();
        const float* gp = g.data_ptr<float>();
        const float* r = rstd.data_ptr<float>();
        float* dxp = dx.data_ptr<float>();
        for (int64_t i = 0; i < rows; ++i) {
            const float *xi = xp + i * c, *gi = gp + i * c;
            double dot = 0;  // sum of (w g) x_hat
            for (int64_t j = 0; j < c; ++j) {
                const float x_hat = xi[j] * r[i];
                dot += static_cast<double>(w[j] * gi[j]) * x_hat;
                dw[static_cast<size_t>(j)] += static_cast<double>(gi[j]) * x_hat;
            }
            const auto mean = static_cast<float>(dot / static_cast<double>(c));
            float* dxi = dxp + i * c;
            for (int64_t j = 0; j < c; ++j)
                dxi[j] = r[i] * (w[j] * gi[j] - xi[j] * r[i] * mean);
        }
        torch::Tensor dweight = torch::tensor(dw, torch::kFloat64).to(torch::kFloat32);  // (C)
        return {dx, dweight, torch::Tensor()};
    }
};

}  // namespace

LinearImpl::LinearImpl(int64_t in, int64_t out, bool with_bias) : in_features(in), out_features(out) {
    weight = register_parameter("weight", torch::empty({out_features, in_features}));
    if (with_bias) bias = register_parameter("bias", torch::zeros({out_features}));
}

double LoraSpec::scaling() const {
    return rslora ? alpha / std::sqrt(static_cast<double>(r)) : alpha / static_cast<double>(r);
}

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
    torch::Tensor y;  // (..., out); a bias inside the product as F.linear adds it (see joint_linear)
    if (nf4) {
        y = nf4_linear(x, nf4, nf4_compute_dtype);
        if (bias.defined()) y = y + bias.to(y.scalar_type());
    } else {
        if (lora_A && lora.dropout == 0 && adapted_linear_applies(weight, bias))
            return adapted_linear(x, weight, bias, lora_A->weight, lora_B->weight * lora.scaling());
        y = bias.defined() ? torch::linear(x, weight, bias) : torch::matmul(x, weight.t());
    }
    if (lora_A) y = y + lora_delta(x);
    return y;
}

torch::Tensor LinearImpl::lora_delta(const torch::Tensor& x) {
    if (!lora_A) return {};
    const torch::Tensor dropped = lora.dropout > 0 ? torch::dropout(x, lora.dropout, is_training()) : x;
    // fp32 adapters on a bf16 base: the products in the activations' dtype, as autocast would run them
    // (outside autocast a mixed product is an error).
    torch::Tensor a = lora_A->weight, b = lora_B->weight;  // (r, in), (out, r)
    if (a.scalar_type() != x.scalar_type() && !bf16_autocast_active(x.device().type())) {
        a = a.to(x.scalar_type());
        b = b.to(x.scalar_type());
    }
    return torch::matmul(torch::matmul(dropped, a.t()), b.t()) *
           lora.scaling();  // (..., in) -> (..., r) -> (..., out)
}

void LinearImpl::add_lora(const LoraSpec& spec) {
    lora = spec;
    const int64_t out = out_features, in = in_features;
    lora_A = register_module("lora_A", std::make_shared<LinearImpl>(in, spec.r));
    lora_B = register_module("lora_B", std::make_shared<LinearImpl>(spec.r, out));
    torch::NoGradGuard no_grad;
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));  // kaiming_uniform with a = sqrt(5)
    lora_A->weight.uniform_(-bound, bound);
    lora_B->weight.zero_();
}

Status LinearImpl::quantize_nf4(bool double_quant, torch::ScalarType compute_dtype) {
    if (nf4) return Status::Ok();
    Result<Nf4Weight> q = quantize_nf4_weight(weight, double_quant);
    if (!q.ok()) return q.status();
    set_nf4(std::make_shared<const Nf4Weight>(std::move(*q)), compute_dtype);
    return Status::Ok();
}

void LinearImpl::set_nf4(std::shared_ptr<const Nf4Weight> quantized, torch::ScalarType compute_dtype) {
    nf4 = std::move(quantized);
    nf4_compute_dtype = compute_dtype;
    parameters_.erase("weight");  // frees the full-precision copy
    weight = torch::Tensor();
}

void LinearImpl::merge_lora() {
    if (!lora_A) return;
    TORCH_CHECK(!nf4, "merge_lora: the base weight is NF4-quantized (dequantize the base model first)");
    torch::NoGradGuard no_grad;
    weight.add_(torch::matmul(lora_B->weight, lora_A->weight) * lora.scaling());  // (out, r) x (r, in)
    unregister_module("lora_A");
    unregister_module("lora_B");
    lora_A.reset();
    lora_B.reset();
}

RMSNormImpl::RMSNormImpl(int64_t size, double eps_) : eps(eps_) {
    weight = register_parameter("weight", torch::ones({size}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
    if (x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && x.is_contiguous() &&
        weight.scalar_type() == torch::kFloat32 && weight.is_contiguous()) {
        return CpuRmsNorm::apply(x, weight, eps);
    }
    if (!x.device().is_cpu()) return fused_rms_norm(x, weight, eps);
    const torch::Tensor x32 = x.to(torch::kFloat32);
    const torch::Tensor normed = x32 * torch::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
    return weight * normed.to(x.scalar_type());
}

std::pair<torch::Tensor, torch::Tensor> RMSNormImpl::forward_after_add(const torch::Tensor& x,
                                                                       const torch::Tensor& delta) {
    if (!x.device().is_cpu()) return fused_add_rms_norm(x, delta, weight, eps);
    torch::Tensor h = x + delta;
    return {h, forward(h)};
}

AttentionImpl::AttentionImpl(const LlamaConfig& c)
    : heads(c.num_attention_heads), kv_heads(c.num_key_value_heads), head_dim(c.head_dim) {
    q_proj = register_module("q_proj", Linear(c.hidden_size, heads * head_dim, c.qkv_bias));
    k_proj = register_module("k_proj", Linear(c.hidden_size, kv_heads * head_dim, c.qkv_bias));
    v_proj = register_module("v_proj", Linear(c.hidden_size, kv_heads * head_dim, c.qkv_bias));
    o_proj = register_module("o_proj", Linear(heads * head_dim, c.hidden_size, c.o_bias));
    if (c.qk_norm) {
        q_norm = register_module("q_norm", RMSNorm(head_dim, c.rms_norm_eps));
        k_norm = register_module("k_norm", RMSNorm(head_dim, c.rms_norm_eps));
    }
}

AttentionImpl::Heads AttentionImpl::project(const torch::Tensor& x, const torch::Tensor& cos,
                                            const torch::Tensor& sin) {
    const int64_t b = x.size(0), t = x.size(1);
    // q, k and v as one product, rotated together: fewer, larger ops.
    torch::Tensor product =
        joint_linear(x, {q_proj.get(), k_proj.get(), v_proj.get()});   // (B, T, (H+2Hkv) D)
    if (!q_norm && rope_in_place_fits(product, head_dim, cos, sin)) {  // GPU kernels: rotated where they lie
        product = rope_in_place(product, head_dim, heads + kv_heads, cos, sin);
        const std::vector<torch::Tensor> q_k_v = product.view({b, t, heads + 2 * kv_heads, head_dim})
                                                     .split_with_sizes({heads, kv_heads, kv_heads}, 2);
        return {q_k_v[0].transpose(1, 2), q_k_v[1].transpose(1, 2), q_k_v[2].transpose(1, 2)};
    }
    const torch::Tensor qkv = product.view({b, t, heads + 2 * kv_heads, head_dim});  // (B, T, H+2Hkv, D)
    // Splits (not slices): their backward is one cat, not a zero-filled tensor per slice.
    const std::vector<torch::Tensor> qk_v = qkv.split_with_sizes({heads + kv_heads, kv_heads}, 2);
    torch::Tensor qk_in = qk_v[0];  // (B, T, H+Hkv, D)
    if (q_norm) {                   // Qwen3: each head of q and k RMS-normalized over D before RoPE
        const std::vector<torch::Tensor> q_k = qk_in.split_with_sizes({heads, kv_heads}, 2);
        qk_in = torch::cat({q_norm(q_k[0].contiguous()), k_norm(q_k[1].contiguous())}, 2);
    }
    torch::Tensor qk;
    if (CpuRope::fits(qk_in, cos, sin)) {
        qk = CpuRope::apply(qk_in, cos, sin);
    } else if (!qk_in.device().is_cpu()) {
        qk = fused_rope(qk_in, cos, sin);
    } else {
        const torch::Tensor cos4 = cos.unsqueeze(-2), sin4 = sin.unsqueeze(-2);  // ([B,] T, 1, D)
        qk = qk_in * cos4 + rotate_half(qk_in) * sin4;
    }
    const std::vector<torch::Tensor> q_k = qk.split_with_sizes({heads, kv_heads}, 2);
    return {q_k[0].transpose(1, 2), q_k[1].transpose(1, 2), qk_v[1].transpose(1, 2)};
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& cos,
                                     const torch::Tensor& sin, const torch::Tensor& mask) {
    const int64_t b = x.size(0), t = x.size(1);
    const Heads h = project(x, cos, sin);
    const torch::Tensor y = causal_attention(h.q, h.k, h.v, mask);       // (B, H, T, D); GQA inside
    return o_proj(y.transpose(1, 2).reshape({b, t, heads * head_dim}));  // (B, T, C)
}

torch::Tensor AttentionImpl::forward_cached(const torch::Tensor& x, const torch::Tensor& cos,
                                            const torch::Tensor& sin, const torch::Tensor& mask,
                                            torch::Tensor& keys, torch::Tensor& values, int64_t past) {
    const int64_t b = x.size(0), t = x.size(1);
    const Heads h = project(x, cos, sin);
    keys.narrow(2, past, t).copy_(h.k);
    values.narrow(2, past, t).copy_(h.v);
    const torch::Tensor y = causal_attention(h.q, keys.narrow(2, 0, past + t), values.narrow(2, 0, past + t),
                                             mask);                      // (B, H, T, D)
    return o_proj(y.transpose(1, 2).reshape({b, t, heads * head_dim}));  // (B, T, C)
}

MlpImpl::MlpImpl(const LlamaConfig& c) {
    gate_proj = register_module("gate_proj", Linear(c.hidden_size, c.intermediate_size, c.mlp_bias));
    up_proj = register_module("up_proj", Linear(c.hidden_size, c.intermediate_size, c.mlp_bias));
    down_proj = register_module("down_proj", Linear(c.intermediate_size, c.hidden_size, c.mlp_bias));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
    const torch::Tensor gate_up =
        joint_linear(x, {gate_proj.get(), up_proj.get()});  // (B, T, 2I): one product
    if (!x.device().is_cpu()) return down_proj(fused_swiglu_packed(gate_up));
    const std::vector<torch::Tensor> gu = gate_up.split(gate_proj->out_features, -1);  // 2 x (B, T, I)
    return down_proj(torch::silu(gu[0]) * gu[1]);
}

DecoderLayerImpl::DecoderLayerImpl(const LlamaConfig& c) {
    self_attn = register_module("self_attn", Attention(c));
    mlp = register_module("mlp", Mlp(c));
    input_layernorm = register_module("input_layernorm", RMSNorm(c.hidden_size, c.rms_norm_eps));
    post_attention_layernorm =
        register_module("post_attention_layernorm", RMSNorm(c.hidden_size, c.rms_norm_eps));
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& cos,
                                        const torch::Tensor& sin, const torch::Tensor& mask) {
    const auto [h, normed] = post_attention_layernorm->forward_after_add(
        x, self_attn(input_layernorm(x), cos, sin, mask));  // (B, T, C) each
    return h + mlp(normed);
}

torch::Tensor DecoderLayerImpl::forward_cached(const torch::Tensor& x, const torch::Tensor& cos,
                                               const torch::Tensor& sin, const torch::Tensor& mask,
                                               torch::Tensor& keys, torch::Tensor& values, int64_t past) {
    const auto [h, normed] = post_attention_layernorm->forward_after_add(
        x, self_attn->forward_cached(input_layernorm(x), cos, sin, mask, keys, values, past));  // (B, T, C)
    return h + mlp(normed);
}

LlamaModelImpl::LlamaModelImpl(const LlamaConfig& c) : config(c) {
    embed_tokens = register_module("embed_tokens", torch::nn::Embedding(c.vocab_size, c.hidden_size));
    layers = register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < c.num_hidden_layers; ++i)
        layers->push_back(DecoderLayer(c));
    norm = register_module("norm", RMSNorm(c.hidden_size, c.rms_norm_eps));
    const std::vector<double> inv = rope_inverse_frequencies(c);
    inv_freq = torch::tensor(inv, torch::kFloat64).to(torch::kFloat32);  // HF keeps inv_freq in fp32
}

const LlamaModelImpl::Tables& LlamaModelImpl::rope_tables(int64_t t, torch::ScalarType dtype,
                                                          torch::Device device, bool with_mask) {
    const auto mask_options = torch::TensorOptions().dtype(dtype).device(device);
    if (tables_.t == t && tables_.dtype == dtype && tables_.device == device) {
        if (with_mask && !tables_.has_mask) {
            tables_.mask = attention_mask(t, t, config.sliding_window, mask_options);
            tables_.has_mask = true;
        }
        return tables_;
    }
    torch::NoGradGuard no_grad;
    // RoPE tables in fp32 as HF computes them: freqs (T, D/2) -> cos, sin (T, D).
    const torch::Tensor positions =
        torch::arange(t, torch::TensorOptions().dtype(torch::kFloat32).device(device));
    const torch::Tensor freqs = torch::outer(positions, inv_freq.to(device));
    const torch::Tensor emb = torch::cat({freqs, freqs}, -1);
    tables_ = {t,
               dtype,
               device,
               emb.cos().to(dtype),
               emb.sin().to(dtype),
               with_mask ? attention_mask(t, t, config.sliding_window, mask_options) : torch::Tensor(),
               with_mask};
    return tables_;
}

LlamaModelImpl::Tables LlamaModelImpl::layer_inputs(int64_t t, torch::ScalarType dtype, torch::Device device,
                                                    const DocumentLayout& documents) {
    const Tables& rope = rope_tables(t, dtype, device, /*with_mask=*/!documents.defined());
    if (!documents.defined()) return rope;
    torch::NoGradGuard no_grad;
    const int64_t b = documents.positions.size(0), d = rope.cos.size(1);
    const torch::Tensor at = documents.positions.reshape({-1});  // (B T)
    Tables out = rope;
    out.cos = rope.cos.index_select(0, at).view({b, t, d});  // (B, T, D)
    out.sin = rope.sin.index_select(0, at).view({b, t, d});
    out.mask = document_attention_mask(documents.documents, config.sliding_window,
                                       torch::TensorOptions().dtype(dtype).device(device));  // (B, 1, T, T)
    out.has_mask = true;
    return out;
}

torch::Tensor LlamaModelImpl::forward(const torch::Tensor& ids, const DocumentLayout& documents) {
    torch::Tensor x = embed_tokens(ids);  // (B, T, C)
    const Tables rope = layer_inputs(ids.size(1), x.scalar_type(), x.device(), documents);
    const bool recompute = gradient_checkpointing && is_training() && torch::GradMode::is_enabled();
    for (size_t i = 0; i < layers->size(); ++i) {
        DecoderLayerImpl* layer = layers->ptr<DecoderLayerImpl>(i).get();
        x = recompute ? checkpointed_layer(layer, x, rope.cos, rope.sin, rope.mask)
                      : layer->forward(x, rope.cos, rope.sin, rope.mask);
    }
    return norm(x);
}

torch::Tensor LlamaModelImpl::forward_cached(const torch::Tensor& ids, KvCache& cache, const UnitHook& hook) {
    const int64_t t = ids.size(1), past = cache.length;
    TORCH_CHECK(past + t <= cache.capacity(), "KV cache of ", cache.capacity(), " positions is full");
    if (hook) hook("embed");
    torch::Tensor x = embed_tokens(ids);  // (B, T, C)
    // The tables of the whole capacity once, sliced to the new positions each call.
    const Tables& rope = rope_tables(cache.capacity(), x.scalar_type(), x.device(), /*with_mask=*/false);
    const torch::Tensor cos = rope.cos.narrow(0, past, t), sin = rope.sin.narrow(0, past, t);  // (T, D)
    const torch::Tensor mask = attention_mask(
        t, past + t, config.sliding_window, torch::TensorOptions().dtype(x.scalar_type()).device(x.device()));
    for (size_t i = 0; i < layers->size(); ++i) {
        if (hook) hook("layers." + std::to_string(i));
        x = layers->ptr<DecoderLayerImpl>(i)->forward_cached(x, cos, sin, mask, cache.keys[i],
                                                             cache.values[i], past);
    }
    cache.length = past + t;
    if (hook) hook("head");
    return norm(x);
}

LlamaForCausalLMImpl::LlamaForCausalLMImpl(const LlamaConfig& c) : config(c) {
    model = register_module("model", LlamaModel(c));
    if (!c.tie_word_embeddings) lm_head = register_module("lm_head", Linear(c.hidden_size, c.vocab_size));
}

torch::Tensor LlamaForCausalLMImpl::hidden_states(const torch::Tensor& ids, const DocumentLayout& documents) {
    return model(ids, documents);
}

torch::Tensor LlamaForCausalLMImpl::output_weight() const {
    return lm_head ? lm_head->weight : model->embed_tokens->weight;
}

torch::Tensor LlamaForCausalLMImpl::logits(const torch::Tensor& ids) {
    return torch::matmul(hidden_states(ids), output_weight().t());  // (B, T, V)
}

KvCache LlamaForCausalLMImpl::make_cache(int64_t batch, int64_t capacity) {
    const torch::Tensor& w = model->embed_tokens->weight;
    KvCache cache;
    for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
        cache.keys.push_back(
            torch::empty({batch, config.num_key_value_heads, capacity, config.head_dim}, w.options()));
        cache.values.push_back(torch::empty_like(cache.keys.back()));
    }
    return cache;
}

torch::Tensor LlamaForCausalLMImpl::next_token_logits(const torch::Tensor& ids, KvCache& cache,
                                                      const UnitHook& hook) {
    const torch::Tensor hidden = model->forward_cached(ids, cache, hook);                       // (B, T, C)
    const torch::Tensor last = hidden.select(1, hidden.size(1) - 1);                            // (B, C)
    const torch::Tensor logits = torch::matmul(last, output_weight().t()).to(torch::kFloat32);  // (B, V)
    if (hook) hook("");
    return logits;
}

torch::Tensor LlamaForCausalLMImpl::cached_logits(const torch::Tensor& ids, KvCache& cache,
                                                  const UnitHook& hook) {
    const torch::Tensor hidden = model->forward_cached(ids, cache, hook);                         // (B, T, C)
    const torch::Tensor logits = torch::matmul(hidden, output_weight().t()).to(torch::kFloat32);  // (B, T, V)
    if (hook) hook("");
    return logits;
}

std::pair<torch::Tensor, torch::Tensor> next_token_pairs(const torch::Tensor& hidden,
                                                         const torch::Tensor& ids,
                                                         const torch::Tensor& trained) {
    torch::Tensor h = hidden.slice(1, 0, -1).reshape({-1, hidden.size(2)});  // (N, C), N = B x (T-1)
    torch::Tensor targets = ids.slice(1, 1).reshape({-1});                   // (N)
    if (!trained.defined()) return {h, targets};
    return {h.index_select(0, trained), targets.index_select(0, trained)};  // (K, C), (K)
}

LossResult causal_lm_loss(LlamaForCausalLM& model, const torch::Tensor& ids, bool count_correct,
                          const torch::Tensor& trained, const DocumentLayout& documents,
                          int64_t chunk_tokens) {
    const torch::Tensor hidden = model->hidden_states(ids, documents);  // (B, T, C)
    const auto [h, targets] = next_token_pairs(hidden, ids, trained);
    LossResult result;
    result.tokens = targets.size(0);
    if (result.tokens == 0) {  // nothing trained in these blocks: a zero that still reaches the graph
        result.loss = hidden.sum().to(torch::kFloat32) * 0.0;
        return result;
    }
    ChunkedLoss loss = chunked_cross_entropy(h, model->output_weight(), targets, chunk_tokens, count_correct);
    result.loss = loss.loss;
    result.correct = loss.correct;
    return result;
}

}  // namespace slipway::model
