// LlamaForCausalLM in LibTorch with Hugging Face's module names, so named_parameters() are exactly the
// keys of an HF checkpoint (model.embed_tokens.weight, model.layers.N.self_attn.q_proj.weight, ...,
// lm_head.weight absent when tied). GQA, RMSNorm, SwiGLU, HF split-half RoPE; the switches of the other
// families (llama_config.h): q/k/v biases (Qwen2), q/k norms (Qwen3), a sliding window (Mistral). No
// parallelism in here.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>

#include "model/llama_config.h"

namespace slipway::model {

// A LoRA adapter on a linear layer (PEFT's LoraLayer): y += (dropout(x) A^T B^T) x scaling.
struct LoraSpec {
    int64_t r = 8;
    double alpha = 8;
    double dropout = 0;
    bool rslora = false;  // scaling alpha / sqrt(r) instead of alpha / r
    double scaling() const;
};

struct Nf4Weight;  // nf4_weight.h

class LinearImpl;
using LoraLinear = torch::nn::ModuleHolder<LinearImpl>;

// A linear layer y = x W^T (+ b) with W: (out, in) and b: (out), named like torch.nn.Linear's "weight" and
// "bias"; with a LoRA adapter its sub-layers are "lora_A" (A: (r, in)) and "lora_B" (B: (out, r)), as PEFT
// names them.
class LinearImpl : public torch::nn::Module {
public:
    LinearImpl(int64_t in_features, int64_t out_features, bool with_bias = false);
    torch::Tensor forward(const torch::Tensor& x);
    // The adapter's term (dropout(x) A^T B^T) x scaling that forward adds to x W^T; undefined without one.
    torch::Tensor lora_delta(const torch::Tensor& x);
    // Adds an adapter: A ~ kaiming_uniform(a = sqrt(5)) as nn.Linear, B = 0, so the output is unchanged.
    void add_lora(const LoraSpec& spec);
    // W += scaling x B A, then drops the adapter.
    void merge_lora();
    bool has_lora() const { return lora_A != nullptr; }
    // QLoRA: replaces the weight parameter by its NF4 form (no longer a parameter: frozen, 4-bit resident),
    // used in `compute_dtype`. Errors from the codec.
    [[nodiscard]] Status quantize_nf4(bool double_quant, torch::ScalarType compute_dtype);
    // The same with the NF4 form made elsewhere (from a checkpoint's bytes): the weight parameter goes.
    void set_nf4(std::shared_ptr<const Nf4Weight> quantized, torch::ScalarType compute_dtype);
    bool quantized() const { return nf4 != nullptr; }

    int64_t in_features, out_features;
    torch::Tensor weight;  // (out, in); undefined once quantized
    torch::Tensor bias;    // undefined without one
    std::shared_ptr<LinearImpl> lora_A, lora_B;
    LoraSpec lora;
    std::shared_ptr<const Nf4Weight> nf4;  // set by quantize_nf4
    torch::ScalarType nf4_compute_dtype = torch::kBFloat16;
};
TORCH_MODULE(Linear);

class RMSNormImpl : public torch::nn::Module {
public:
    RMSNormImpl(int64_t size, double eps);
    torch::Tensor forward(const torch::Tensor& x);
    // The residual add before the norm: {h = x + delta, forward(h)}, as one fused step on GPUs.
    std::pair<torch::Tensor, torch::Tensor> forward_after_add(const torch::Tensor& x,
                                                              const torch::Tensor& delta);
    torch::Tensor weight;
    double eps;
};
TORCH_MODULE(RMSNorm);

// Called before each part of a cached forward runs, with the name of the unit it belongs to in sharded
// training ("embed", "layers.N", "head"), and with "" when the call is done: a ShardedModel gathers the unit
// there and gives back the one before (train/sharded_model.h). Empty: the model holds all its weights.
using UnitHook = std::function<void(const std::string& unit)>;

// Rows that hold several documents (packed conversations): each token's position within its document and
// its document's number within the row, (B, T) int64 each. Attention stays inside a document and RoPE
// restarts at each, so a document computes exactly what it would alone. Undefined: one document a row.
struct DocumentLayout {
    torch::Tensor positions, documents;
    bool defined() const { return positions.defined(); }
};

// Keys and values of the positions decoded so far, for generation one token at a time (no autograd).
struct KvCache {
    std::vector<torch::Tensor> keys, values;  // per layer: (B, Hkv, capacity, D)
    int64_t length = 0;                       // positions filled
    int64_t capacity() const { return keys.empty() ? 0 : keys.front().size(2); }
};

class AttentionImpl : public torch::nn::Module {
public:
    explicit AttentionImpl(const LlamaConfig& config);
    // x: (B, T, C); cos, sin: (T, D), or (B, T, D) for a DocumentLayout; mask: (T, T) from attention_mask, or
    // (B, 1, T, T) from document_attention_mask
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                          const torch::Tensor& mask);
    // The same for T new positions after `past` cached ones: writes their keys and values into `keys`,
    // `values` (B, Hkv, capacity, D) at [past, past + T) and attends over [0, past + T). cos, sin: (T, D) of
    // the new positions; mask: (T, past + T) from attention_mask.
    torch::Tensor forward_cached(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                 const torch::Tensor& mask, torch::Tensor& keys, torch::Tensor& values,
                                 int64_t past);
    Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
    RMSNorm q_norm{nullptr}, k_norm{nullptr};  // Qwen3 only: over each head's D
    int64_t heads, kv_heads, head_dim;

private:
    struct Heads {
        torch::Tensor q, k, v;  // (B, H, T, D), (B, Hkv, T, D), (B, Hkv, T, D)
    };
    Heads project(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
};
TORCH_MODULE(Attention);

class MlpImpl : public torch::nn::Module {
public:
    explicit MlpImpl(const LlamaConfig& config);
    torch::Tensor forward(const torch::Tensor& x);
    Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(Mlp);

class DecoderLayerImpl : public torch::nn::Module {
public:
    explicit DecoderLayerImpl(const LlamaConfig& config);
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                          const torch::Tensor& mask);
    torch::Tensor forward_cached(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                 const torch::Tensor& mask, torch::Tensor& keys, torch::Tensor& values,
                                 int64_t past);
    Attention self_attn{nullptr};
    Mlp mlp{nullptr};
    RMSNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
};
TORCH_MODULE(DecoderLayer);

class LlamaModelImpl : public torch::nn::Module {
public:
    explicit LlamaModelImpl(const LlamaConfig& config);
    // ids: (B, T) int64 -> hidden (B, T, C)
    torch::Tensor forward(const torch::Tensor& ids, const DocumentLayout& documents = {});
    // ids: (B, T) at positions [cache.length, cache.length + T) -> hidden (B, T, C); appends to the cache.
    torch::Tensor forward_cached(const torch::Tensor& ids, KvCache& cache, const UnitHook& hook = {});
    torch::nn::Embedding embed_tokens{nullptr};
    torch::nn::ModuleList layers{nullptr};
    RMSNorm norm{nullptr};
    torch::Tensor inv_freq;  // (D / 2), not a parameter
    LlamaConfig config;
    bool gradient_checkpointing = false;  // recompute each layer's activations in backward (training)

    // RoPE tables and causal mask for the last sequence length, dtype and device seen: (T, D), (T, D),
    // (T, T); the mask is undefined where attention is causal by itself (torch 2.x, no sliding window).
    struct Tables {
        int64_t t = -1;
        torch::ScalarType dtype = torch::kFloat32;
        torch::Device device = torch::kCPU;
        torch::Tensor cos, sin, mask;
        bool has_mask = false;  // the mask was made (undefined can also mean "none needed")
    };
    // The layers' inputs besides x, for callers that run the layers one by one (sharded training).
    // with_mask false: only cos and sin (decoding slices them and masks each step itself; the (T, T) mask of
    // a whole KV cache's capacity would be made for nothing).
    const Tables& rope_tables(int64_t t, torch::ScalarType dtype, torch::Device device,
                              bool with_mask = true);
    // The layers' inputs for rows of T tokens: rope_tables', or for a DocumentLayout the tables at each
    // token's position (B, T, D) and the document mask (B, 1, T, T), made for this batch.
    Tables layer_inputs(int64_t t, torch::ScalarType dtype, torch::Device device,
                        const DocumentLayout& documents);

private:
    Tables tables_;
};
TORCH_MODULE(LlamaModel);

class LlamaForCausalLMImpl : public torch::nn::Module {
public:
    explicit LlamaForCausalLMImpl(const LlamaConfig& config);
    torch::Tensor hidden_states(const torch::Tensor& ids,
                                const DocumentLayout& documents = {});  // (B, T) -> (B, T, C)
    torch::Tensor logits(const torch::Tensor& ids);                     // (B, T) -> (B, T, V)
    // An empty cache for `batch` sequences of up to `capacity` positions, in the weights' dtype and device.
    KvCache make_cache(int64_t batch, int64_t capacity);
    // Logits of the last of T new positions after the cached ones: (B, T) -> (B, V) fp32; appends to cache.
    torch::Tensor next_token_logits(const torch::Tensor& ids, KvCache& cache, const UnitHook& hook = {});
    // Logits of all T new positions: (B, T) -> (B, T, V) fp32; appends to cache.
    torch::Tensor cached_logits(const torch::Tensor& ids, KvCache& cache, const UnitHook& hook = {});
    // The output projection's weight: lm_head, or embed_tokens when tied. (V, C)
    torch::Tensor output_weight() const;
    LlamaModel model{nullptr};
    Linear lm_head{nullptr};  // null when tie_word_embeddings
    LlamaConfig config;
};
TORCH_MODULE(LlamaForCausalLM);

// Mean next-token cross-entropy of ids: (B, T) over the B x (T-1) shifted targets, or over the trained ones
// (`trained`: their positions in that order, train::trained_targets'; undefined: all), computed from hidden
// states in chunks so the (B, T, V) fp32 logits never exist at once. Also returns the argmax hits.
struct LossResult {
    torch::Tensor loss;   // scalar, differentiable
    int64_t tokens = 0;   // targets the mean is over
    int64_t correct = 0;  // argmax == target (when asked for)
};
LossResult causal_lm_loss(LlamaForCausalLM& model, const torch::Tensor& ids, bool count_correct = true,
                          const torch::Tensor& trained = {}, const DocumentLayout& documents = {},
                          int64_t chunk_tokens = 256);

// The loss's inputs from the final hidden states (B, T, C) and ids (B, T): the (N, C) rows that predict and
// the (N) next tokens, all B x (T-1) of them or the `trained` ones.
std::pair<torch::Tensor, torch::Tensor> next_token_pairs(const torch::Tensor& hidden,
                                                         const torch::Tensor& ids,
                                                         const torch::Tensor& trained);

}  // namespace slipway::model
