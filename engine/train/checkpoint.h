// Training checkpoints: <output_dir>/checkpoint-<step>/ with the trainable weights, AdamW state, RNG
// state and the position in the data (state.json), written to a temporary name, renamed, and marked
// complete by a DONE file written last. Resume restores all of it, so a resumed run continues the same
// loss curve; save_total_limit prunes the oldest complete checkpoints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "contract/status.h"
#include "model/llama.h"
#include "train/flat_adamw.h"

namespace slipway::train {

inline constexpr const char* kCheckpointMagic = "slipway.checkpoint";
inline constexpr int kCheckpointVersion = 1;

// Where the loop is; everything else lives in tensors.
struct LoopPosition {
    int64_t step = 0;     // optimizer steps done
    uint64_t epoch = 0;   // sampler epoch
    uint64_t cursor = 0;  // next sample index within the epoch (this rank)
    int64_t world_size = 1;
};

// Writes checkpoint-<step> under `output_dir`. On failure (e.g. a full disk) nothing complete-looking is
// left and earlier checkpoints are untouched; the error says so.
Result<std::string> save_checkpoint(const std::string& output_dir, model::LlamaForCausalLM& model,
                                    FlatAdamW& optimizer, const std::vector<std::string>& trainable_names,
                                    const LoopPosition& position);

// Sharded runs: every rank writes its own shards, rank 0 the rest. Rank 0 first creates the temporary
// folder (begin_checkpoint), then every rank writes shard-<rank>-of-<world>.safetensors into it
// (write_rank_shards: its shards, their AdamW moments, its RNG), then rank 0 writes state.json, renames the
// folder and writes DONE (finish_checkpoint). save_checkpoint is the same three steps on one process.
Result<std::string> begin_checkpoint(const std::string& output_dir, int64_t step);
// The temporary folder begin_checkpoint creates (the other ranks write into it too).
std::string checkpoint_tmp_dir(const std::string& output_dir, int64_t step);
// Removes the temporary folder of an unfinished save; the error says why and that earlier ones are intact.
Status discard_checkpoint(const std::string& output_dir, const std::string& tmp_dir, int64_t step,
                          const std::string& why);
[[nodiscard]] Status write_rank_shards(const std::string& tmp_dir, int64_t rank, int64_t world_size,
                                       const std::vector<std::string>& names,
                                       const std::vector<torch::Tensor>& shards, FlatAdamW& optimizer);
Result<std::string> finish_checkpoint(const std::string& output_dir, const std::string& tmp_dir,
                                      FlatAdamW& optimizer, const std::vector<std::string>& trainable_names,
                                      const LoopPosition& position, bool sharded);
// Restores this rank's shards, their optimizer state and its RNG. Another world size is refused, naming both.
Result<LoopPosition> load_sharded_checkpoint(const std::string& dir, int64_t rank, int64_t world_size,
                                             const std::vector<std::string>& names,
                                             const std::vector<torch::Tensor>& shards, FlatAdamW& optimizer);

// checkpoint-<step> under output_dir, and the step a checkpoint folder's name gives (-1 for another name).
std::string checkpoint_dir(const std::string& output_dir, int64_t step);
int64_t checkpoint_step(const std::string& dir);

// "latest" -> the newest complete checkpoint under output_dir (an error when there is none); otherwise the
// given folder, which must be complete (DONE).
Result<std::string> resolve_checkpoint(const std::string& request, const std::string& output_dir);

// Restores weights, optimizer state and RNG; returns the loop position. Refuses an incomplete or corrupt
// checkpoint, or one whose trainable parameters differ from this run's, naming the problem.
Result<LoopPosition> load_checkpoint(const std::string& dir, model::LlamaForCausalLM& model,
                                     FlatAdamW& optimizer, const std::vector<std::string>& trainable_names);

// Removes the oldest complete checkpoints so at most `keep` remain; returns the removed folders.
std::vector<std::string> prune_checkpoints(const std::string& output_dir, int64_t keep);

}  // namespace slipway::train
