// LlamaConfig: the architecture of a LLaMA-family model (Llama, Mistral, Qwen2/2.5, Qwen3) read from a
// Hugging Face config.json (no torch). The families differ only in the switches below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"

namespace slipway::model {

// Limits on config.json sizes: far past any released model (Llama 3.1 405B: hidden 16384, 126 layers,
// vocab 128256), and low enough that a hostile file can neither make the plan walk 2^31 layers nor wrap
// the products the engine forms from them (parameter counts, tensor sizes) past int64.
inline constexpr int64_t kMaxVocabSize = int64_t{1} << 24;  // tokenizer ids are below 2^24 too
inline constexpr int64_t kMaxHiddenSize = int64_t{1} << 17;
inline constexpr int64_t kMaxIntermediateSize = int64_t{1} << 20;
inline constexpr int64_t kMaxHiddenLayers = 1024;
inline constexpr int64_t kMaxAttentionHeads = 1024;
inline constexpr int64_t kMaxHeadDim = 4096;
inline constexpr int64_t kMaxPositionEmbeddings = int64_t{1} << 26;

struct RopeScaling {
    std::string type = "default";  // default | linear | llama3
    double factor = 1.0;
    // llama3 only
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    int64_t original_max_position_embeddings = 8192;
};

// The config.json model_type values the engine runs, and the architecture name HF writes for each.
struct ModelFamily {
    const char* model_type;
    const char* architecture;
};
inline constexpr ModelFamily kModelFamilies[] = {
    {"llama", "LlamaForCausalLM"},
    {"mistral", "MistralForCausalLM"},
    {"qwen2", "Qwen2ForCausalLM"},
    {"qwen3", "Qwen3ForCausalLM"},
};

struct LlamaConfig {
    std::string model_type = "llama";  // one of kModelFamilies
    int64_t vocab_size = 32000;
    int64_t hidden_size = 4096;
    int64_t intermediate_size = 11008;
    int64_t num_hidden_layers = 32;
    int64_t num_attention_heads = 32;
    int64_t num_key_value_heads = 32;
    int64_t head_dim = 128;  // hidden_size / heads unless given
    int64_t max_position_embeddings = 4096;
    double rms_norm_eps = 1e-6;
    double rope_theta = 10000.0;
    RopeScaling rope_scaling;
    bool tie_word_embeddings = false;
    bool qkv_bias = false;  // q/k/v projections have biases (Qwen2 always; Llama and Qwen3: attention_bias)
    bool o_bias = false;    // o_proj has a bias (Llama and Qwen3: attention_bias)
    bool mlp_bias = false;  // gate/up/down have biases (Llama: mlp_bias)
    bool qk_norm = false;   // Qwen3: RMSNorm over head_dim on each head of q and k, before RoPE
    // Mistral: a query sees only the keys fewer than this many positions back (HF's sliding_window); 0: all.
    int64_t sliding_window = 0;
    double initializer_range = 0.02;
    std::string torch_dtype = "float32";
    std::vector<int64_t> bos_token_ids;
    std::vector<int64_t> eos_token_ids;

    // Errors name the key ("config.json: num_attention_heads (6) must divide hidden_size (100)"); every
    // size must be in [1, its kMax* limit].
    static Result<LlamaConfig> from_json(const nlohmann::json& json);
    static Result<LlamaConfig> from_file(const std::string& path);
    nlohmann::json to_json() const;  // as HF writes it for model_type (architectures, the family's keys)

    int64_t parameter_count() const;
};

// Inverse RoPE frequencies [head_dim / 2] after rope_scaling, as HF's _compute_*_parameters.
std::vector<double> rope_inverse_frequencies(const LlamaConfig& config);

}  // namespace slipway::model
