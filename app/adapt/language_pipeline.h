// The "Adapt a model to a language" page's model: what the user chooses (a base model, its instruct model, a
// corpus, how the tokenizer changes, how long the embeddings train, the LEP method, an optional calibration
// LoRA and eval tasks) turned into a pipeline document (contract/pipeline.h) that `slipway pipeline run` or
// `slipway submit` takes. The training steps start from the ruadapt presets' run configs, so the seed's
// hyperparameters are written once, there. No widgets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/status.h"

namespace slipway::app {

// What the training steps take on a cluster instead of the presets' Slurm resources (the seed's cluster:
// 8 nodes of 8 GPUs for five days, its own image and mounts). Unset keeps the preset's.
struct ClusterResources {
    int64_t nodes = 0;  // 0: the preset's
    std::optional<int64_t> gpus_per_node;
    std::string time;  // Slurm's time limit ("1-00:00:00"); empty: the preset's
    // An image on the cluster (an enroot .sqsh or a registry name); empty: the preset's image, mounts and
    // working folder. Given, it comes with exactly `container_mounts` ("host:container") and no preset's
    // folder.
    std::string container_image;
    std::vector<std::string> container_mounts;
};

struct LanguageAdaptation {
    std::string name = "ruadapt";
    std::string base_model, instruct_model, corpus;  // HF folders (each with tokenizer.json), JSONL
    std::string tokenizer = "bpe";                   // bpe | unigram (a new one) | extend (the base's)
    int64_t vocab_size = 32000;                      // bpe, unigram
    int64_t added_tokens = 8000;                     // extend
    int64_t block_size = 0;                          // 0: the presets'
    int64_t embedding_steps = 0;                     // 0: the preset's epochs
    double embedding_learning_rate = 0;              // 0: the preset's
    std::string lep_method = "conversion";           // swap | overlap | conversion
    bool calibrate = true;
    std::string calibration_data;   // JSONL; empty: the corpus
    int64_t calibration_steps = 0;  // 0: the preset's epochs
    std::string eval_tasks;         // empty: no eval step
    bool on_this_computer =
        true;  // CPU, fp32, one rank; else the presets' Slurm resources, as `cluster` says
    ClusterResources cluster;
};

// The pipeline document. `embeddings_preset` and `lora_preset`: the ruadapt-embeddings and ruadapt-lora run
// configs (resources/presets). Errors name the missing choice (a model, the corpus).
[[nodiscard]] Result<nlohmann::json> language_pipeline(const LanguageAdaptation& a,
                                                       const nlohmann::json& embeddings_preset,
                                                       const nlohmann::json& lora_preset);

}  // namespace slipway::app
