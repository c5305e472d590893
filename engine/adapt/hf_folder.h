// An HF model folder opened for a vocabulary change: its config.json as written (every field kept), its
// tensors (memory-mapped), its embedding matrices; and the folder written back with new embedding
// matrices, the new vocab_size and the files beside the weights.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "contract/status.h"
#include "io/safetensors.h"

namespace slipway::adapt {

inline constexpr const char* kEmbedKey = "model.embed_tokens.weight";
inline constexpr const char* kHeadKey = "lm_head.weight";

struct ModelFolder {
    std::string dir;
    nlohmann::json config;  // config.json as read
    io::Checkpoint checkpoint;
    torch::Tensor embed;                // (V, H), over the mapped bytes
    std::optional<torch::Tensor> head;  // (V, H); absent when the checkpoint stores no lm_head (tied)
    bool tied = false;                  // config.json's tie_word_embeddings
    int64_t vocab_size = 0;             // config.json's
};

// Errors name the folder and the missing file, tensor or field, and a matrix whose rows are not
// config.json's vocab_size.
[[nodiscard]] Result<ModelFolder> open_model_folder(const std::string& dir);

// The id in the new vocabulary of a token of the old one, if it has one.
using TokenIdMap = std::function<std::optional<int64_t>(int64_t)>;

// Writes `out_dir`: config.json (vocab_size set to the new matrices' rows), model.safetensors (every
// tensor of `model`, embed_tokens and lm_head replaced; dtypes kept), then `tokenizer_text` as
// tokenizer.json and the kSideFiles of `side_dir` that exist (tokenizer_config.json, chat template...),
// tokenizer_config.json without its "added_tokens_decoder" (the ids of another tokenizer). The
// bos/eos/pad_token_id of config.json and generation_config.json go through `new_id`; one the new
// vocabulary lacks is dropped.
[[nodiscard]] Status write_model_folder(const ModelFolder& model, const torch::Tensor& embed,
                                        const std::optional<torch::Tensor>& head, const std::string& out_dir,
                                        const std::string& tokenizer_text, const std::string& side_dir,
                                        const TokenIdMap& new_id);

// The files beside the weights that go with a tokenizer and a chat template.
extern const std::vector<std::string> kSideFiles;

}  // namespace slipway::adapt
