// What llama.cpp needs to load a LLaMA-family Hugging Face checkpoint as GGUF, without torch: the
// architecture, the <arch>.* hyperparameters, the tokenizer.* vocabulary read from tokenizer.json /
// tokenizer_config.json, and how each HF tensor is named and laid out in GGUF (the Q/K row permutation of
// the llama architecture). Follows llama.cpp 0.7.0's convert_hf_to_gguf.py, whose choices are cited below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/status.h"
#include "io/gguf_writer.h"
#include "model/llama_config.h"

namespace slipway::io {

// general.file_type (llama_ftype): what most 2-D weights are stored as.
enum class GgufFileType : uint32_t { kAllF32 = 0, kMostlyF16 = 1, kMostlyQ8_0 = 7, kMostlyBF16 = 32 };
Result<GgufFileType> parse_gguf_file_type(const std::string& name);  // "f32", "f16", "bf16", "q8_0"

// tokenizer.ggml.token_type values (llama_token_type).
enum class GgufTokenType : int32_t {
    kNormal = 1,
    kUnknown = 2,
    kControl = 3,
    kUserDefined = 4,
    kUnused = 5,
    kByte = 6,
};

// The tokenizer.* keys.
struct GgufTokenizer {
    std::string
        model;        // "gpt2": byte-level BPE (Llama 3, Qwen); "llama": SentencePiece BPE (Llama 2, Mistral)
    std::string pre;  // "llama-bpe", "qwen2", "default"
    std::vector<std::string> tokens;  // one per id, padded with "[PAD<id>]" up to the model's vocab_size
    std::vector<int32_t> token_types;
    std::vector<std::string> merges;  // gpt2 only: "left right"
    std::vector<float> scores;        // llama only: the higher, the earlier the merge
    std::optional<uint32_t> bos_id, eos_id, unknown_id, separator_id, padding_id;
    std::optional<bool> add_bos, add_eos;        // by the tokenizer's own rule (tokenizer/special_tokens.h)
    std::string add_bos_source, add_eos_source;  // where that was decided, for the export's report
    std::optional<bool> add_space_prefix;        // llama only
    bool normalizer_nfc = false;                 // an NFC normalizer (Qwen): tokenizer.ggml.normalizer.nfc
    std::string chat_template;                   // empty: none
    // tokenizer_config.json's list form [{"name", "template"}]: tokenizer.chat_template.<name>.
    std::vector<std::pair<std::string, std::string>> named_chat_templates;
};

// Reads folder/tokenizer.json, and folder/tokenizer_config.json, folder/chat_template.jinja and
// folder/config.json (for *_token_id) where present. `vocab_size` (the embedding's rows) pads the token
// list; 0 takes the tokenizer's own size. Errors name the file and the key.
Result<GgufTokenizer> read_gguf_tokenizer(const std::string& folder, int64_t vocab_size = 0);

// The tokenizer.ggml.pre name llama.cpp 0.7.0 gives a byte-level BPE tokenizer.json's pre_tokenizer, or an
// error naming what is not recognised. convert_hf_to_gguf.py decides it by hashing the token ids of a test
// string; the families here differ only in the Split regex, so that is matched instead:
//   Llama 3 / 3.1 / 3.2 / 3.3 ("\p{N}{1,3}": digits in threes)  -> "llama-bpe"
//   Qwen2 / 2.5 / 3 ("\p{N}": single digits)                     -> "qwen2"
Result<std::string> gguf_pre_tokenizer(const std::string& split_regex);

// A whole checkpoint folder's metadata.
struct GgufModelMetadata {
    std::string architecture;  // "llama" (LlamaForCausalLM, MistralForCausalLM), "qwen2", "qwen3"
    std::string name;          // general.name
    model::LlamaConfig config;
    GgufTokenizer tokenizer;
};

// "llama" for model_type llama and mistral, "qwen2", "qwen3".
Result<std::string> gguf_architecture(const model::LlamaConfig& config);

// folder/config.json (through LlamaConfig) and the tokenizer files.
Result<GgufModelMetadata> read_gguf_metadata(const std::string& folder);

// Sets general.*, <arch>.* and tokenizer.* keys:
//   general.architecture, general.name, general.file_type, general.quantization_version (2)
//   <arch>.context_length (max_position_embeddings), .embedding_length (hidden_size), .block_count,
//   .feed_forward_length (intermediate_size), .attention.head_count, .attention.head_count_kv,
//   .attention.layer_norm_rms_epsilon, .rope.freq_base (rope_theta), .rope.dimension_count (head_dim),
//   .vocab_size, .attention.key_length/.value_length (only when head_dim != hidden_size / heads),
//   .rope.scaling.type "linear" + .rope.scaling.factor for linear RoPE scaling (llama3 scaling is the
//   rope_freqs.weight tensor instead: add_gguf_rope_freqs)
//   tokenizer.ggml.{model, pre, tokens, token_type, merges | scores, bos_token_id, eos_token_id,
//   unknown_token_id, seperator_token_id, padding_token_id, add_bos_token, add_eos_token,
//   add_space_prefix, normalizer.nfc}, tokenizer.chat_template, tokenizer.chat_template.<name>
void add_gguf_metadata(const GgufModelMetadata& metadata, GgufFileType file_type, GgufWriter& writer);

// How one HF tensor goes into the file.
struct GgufTensorPlan {
    std::string gguf_name;  // "blk.0.attn_q.weight"
    // > 0: the rows go through permute_for_gguf_rope with this many heads (llama's q and k: weights and
    // biases); 0: written as they are.
    int64_t rope_permute_heads = 0;
};

// The plan for `hf_name` ("model.layers.0.self_attn.q_proj.weight"); nullopt for a tensor llama.cpp does
// not read (rotary_emb.inv_freq); an error for a name the architecture has no place for.
//   model.embed_tokens.weight -> token_embd.weight     model.norm.weight -> output_norm.weight
//   lm_head.weight -> output.weight (absent when tied: llama.cpp then reuses token_embd)
//   model.layers.N.input_layernorm -> blk.N.attn_norm      .post_attention_layernorm -> blk.N.ffn_norm
//   .self_attn.{q,k,v}_proj -> blk.N.attn_{q,k,v}          .self_attn.o_proj -> blk.N.attn_output
//   .self_attn.{q,k}_norm -> blk.N.attn_{q,k}_norm (qwen3) .mlp.{gate,up,down}_proj ->
//   blk.N.ffn_{gate,up,down}
Result<std::optional<GgufTensorPlan>> gguf_tensor_plan(const std::string& hf_name,
                                                       const GgufModelMetadata& metadata);

// The type a tensor is stored as under `file_type`, as convert_hf_to_gguf.py: 1-D tensors, norms and
// biases stay F32; Q8_0 falls back to F16 when the rows are not a multiple of 32 values.
GgufType gguf_tensor_type(const std::string& gguf_name, const std::vector<int64_t>& shape,
                          GgufFileType file_type);

// HF's Llama rotates the two halves of each head (rotate_half); ggml's llama RoPE rotates adjacent pairs.
// convert_hf_to_gguf.py's permute reorders the rows of q_proj (heads = num_attention_heads) and k_proj
// (heads = num_key_value_heads) so that ggml's rotation computes HF's: within each head of d = out / heads
// rows, GGUF row 2i + j is HF row j * d/2 + i (j in {0, 1}). Qwen2 and Qwen3 use NEOX-style RoPE in
// llama.cpp, the same as HF's, and need none.
// rows: (out, in) row-major; result: (out, in), not aliasing rows.
void permute_for_gguf_rope(const float* rows, int64_t out, int64_t in, int64_t heads, float* result);
// The HF row that GGUF row `row` of a permuted (out, ...) tensor comes from (for streaming).
int64_t gguf_rope_source_row(int64_t row, int64_t out, int64_t heads);

// rope_type "llama3" (Llama 3.1+): llama.cpp divides each RoPE frequency by rope_freqs.weight, one factor
// per pair of head dims, computed as convert_hf_to_gguf.py's generate_extra_tensors. Empty otherwise.
std::vector<float> llama3_rope_factors(const model::LlamaConfig& config);
// Adds rope_freqs.weight (F32, head_dim / 2) when llama3_rope_factors is not empty.
[[nodiscard]] Status add_gguf_rope_freqs(const GgufModelMetadata& metadata, GgufWriter& writer);

}  // namespace slipway::io
