// The LLaMA forward pass (llama.h), written straight through with shape comments, following HF's
// modeling_llama numerics (fp32 RMSNorm and RoPE tables, split-half rotation, repeat_kv for GQA).
#include <torch/torch.h>

#include "model/checkpointing.h"
#include "model/chunked_loss.h"
#include "model/llama.h"
#include "model/torch_compat.h"

namespace slipway::model {
namespace {

// x: (..., D) -> (-x2, x1) with x1, x2 the two halves.
torch::Tensor rotate_half(const torch::Tensor& x) {
    const int64_t half = x.size(-1) / 2;
    return torch::cat({-x.slice(-1, half), x.slice(-1, 0, half)}, -1);
}

}  // namespace

LinearImpl::LinearImpl(int64_t in_features, int64_t out_features) {
    weight = register_parameter("weight", torch::empty({out_features, in_features}));
}

double LoraSpec::scaling() const {
    return rslora ? alpha / std::sqrt(static_cast<double>(r)) : alpha / static_cast<double>(r);
}

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
    torch::Tensor y = torch::matmul(x, weight.t());  // (..., out)
    if (lora_A) {
        const torch::Tensor dropped = lora.dropout > 0 ? torch::dropout(x, lora.dropout, is_training()) : x;
        y = y + lora_B->forward(lora_A->forward(dropped)) *
                    lora.scaling();  // (..., in) -> (..., r) -> (..., out)
    }
    return y;
}

void LinearImpl::add_lora(const LoraSpec& spec) {
    lora = spec;
    const int64_t out = weight.size(0), in = weight.size(1);
    lora_A = register_module("lora_A", std::make_shared<LinearImpl>(in, spec.r));
    lora_B = register_module("lora_B", std::make_shared<LinearImpl>(spec.r, out));
    torch::NoGradGuard no_grad;
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));  // kaiming_uniform with a = sqrt(5)
    lora_A->weight.uniform_(-bound, bound);
    lora_B->weight.zero_();
}

void LinearImpl::merge_lora() {
    if (!lora_A) return;
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
    const torch::Tensor x32 = x.to(torch::kFloat32);
    const torch::Tensor normed = x32 * torch::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
    return weight * normed.to(x.scalar_type());
}

AttentionImpl::AttentionImpl(const LlamaConfig& c)
    : heads(c.num_attention_heads), kv_heads(c.num_key_value_heads), head_dim(c.head_dim) {
    q_proj = register_module("q_proj", Linear(c.hidden_size, heads * head_dim));
    k_proj = register_module("k_proj", Linear(c.hidden_size, kv_heads * head_dim));
    v_proj = register_module("v_proj", Linear(c.hidden_size, kv_heads * head_dim));
    o_proj = register_module("o_proj", Linear(heads * head_dim, c.hidden_size));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& cos,
                                     const torch::Tensor& sin, const torch::Tensor& mask) {
    const int64_t b = x.size(0), t = x.size(1);
    torch::Tensor q = q_proj(x).view({b, t, heads, head_dim}).transpose(1, 2);     // (B, H, T, D)
    torch::Tensor k = k_proj(x).view({b, t, kv_heads, head_dim}).transpose(1, 2);  // (B, Hkv, T, D)
    torch::Tensor v = v_proj(x).view({b, t, kv_heads, head_dim}).transpose(1, 2);  // (B, Hkv, T, D)
    q = q * cos + rotate_half(q) * sin;
    k = k * cos + rotate_half(k) * sin;
    if (kv_heads != heads) {                           // GQA: query head h reads kv head h / (H / Hkv)
        k = k.repeat_interleave(heads / kv_heads, 1);  // (B, H, T, D)
        v = v.repeat_interleave(heads / kv_heads, 1);
    }
    const torch::Tensor y = causal_attention(q, k, v, mask);             // (B, H, T, D)
    return o_proj(y.transpose(1, 2).reshape({b, t, heads * head_dim}));  // (B, T, C)
}

MlpImpl::MlpImpl(const LlamaConfig& c) {
    gate_proj = register_module("gate_proj", Linear(c.hidden_size, c.intermediate_size));
    up_proj = register_module("up_proj", Linear(c.hidden_size, c.intermediate_size));
    down_proj = register_module("down_proj", Linear(c.intermediate_size, c.hidden_size));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
    return down_proj(torch::silu(gate_proj(x)) * up_proj(x));  // (B, T, C)
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
    const torch::Tensor h = x + self_attn(input_layernorm(x), cos, sin, mask);  // (B, T, C)
    return h + mlp(post_attention_layernorm(h));
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

const LlamaModelImpl::Tables& LlamaModelImpl::tables(int64_t t, torch::ScalarType dtype, torch::Device device) {
    if (tables_.t == t && tables_.dtype == dtype && tables_.mask.device() == device) return tables_;
    torch::NoGradGuard no_grad;
    // RoPE tables in fp32 as HF computes them: freqs (T, D/2) -> cos, sin (T, D).
    const torch::Tensor positions = torch::arange(t, torch::TensorOptions().dtype(torch::kFloat32).device(device));
    const torch::Tensor freqs = torch::outer(positions, inv_freq.to(device));
    const torch::Tensor emb = torch::cat({freqs, freqs}, -1);
    tables_ = {t, dtype, emb.cos().to(dtype), emb.sin().to(dtype),
               causal_mask(t, torch::TensorOptions().dtype(dtype).device(device))};
    return tables_;
}

torch::Tensor LlamaModelImpl::forward(const torch::Tensor& ids) {
    torch::Tensor x = embed_tokens(ids);  // (B, T, C)
    const Tables& rope = tables(ids.size(1), x.scalar_type(), x.device());
    const bool recompute = gradient_checkpointing && is_training() && torch::GradMode::is_enabled();
    for (size_t i = 0; i < layers->size(); ++i) {
        DecoderLayerImpl* layer = layers->ptr<DecoderLayerImpl>(i).get();
        x = recompute ? checkpointed_layer(layer, x, rope.cos, rope.sin, rope.mask)
                      : layer->forward(x, rope.cos, rope.sin, rope.mask);
    }
    return norm(x);
}

LlamaForCausalLMImpl::LlamaForCausalLMImpl(const LlamaConfig& c) : config(c) {
    model = register_module("model", LlamaModel(c));
    if (!c.tie_word_embeddings) lm_head = register_module("lm_head", Linear(c.hidden_size, c.vocab_size));
}

torch::Tensor LlamaForCausalLMImpl::hidden_states(const torch::Tensor& ids) {
    return model(ids);
}

torch::Tensor LlamaForCausalLMImpl::output_weight() const {
    return lm_head ? lm_head->weight : model->embed_tokens->weight;
}

torch::Tensor LlamaForCausalLMImpl::logits(const torch::Tensor& ids) {
    return torch::matmul(hidden_states(ids), output_weight().t());  // (B, T, V)
}

LossResult causal_lm_loss(LlamaForCausalLM& model, const torch::Tensor& ids, bool count_correct,
                          int64_t chunk_tokens) {
    const torch::Tensor hidden = model->hidden_states(ids);  // (B, T, C)
    const int64_t c = hidden.size(2);
    const torch::Tensor h = hidden.slice(1, 0, -1).reshape({-1, c});  // (N, C), N = B x (T-1)
    const torch::Tensor targets = ids.slice(1, 1).reshape({-1});      // (N)
    LossResult result;
    ChunkedLoss loss = chunked_cross_entropy(h, model->output_weight(), targets, chunk_tokens, count_correct);
    result.loss = loss.loss;
    result.tokens = targets.size(0);
    result.correct = loss.correct;
    return result;
}

}  // namespace slipway::model
