// Training checkpoints: <output_dir>/checkpoint-<step>/ with the trainable weights, AdamW state, RNG
// state (CPU, and the GPU's) and the position in the data (state.json). Every file is written through the
// FileSystem seam and fsynced, the temporary folder fsynced, renamed, its parent fsynced, and only then
// DONE written (durably too): it records each file's size, and state.json's XXH64, so a checkpoint torn
// by a crash or a lying disk is recognised. Resume restores all of it, so a resumed run continues the same
// loss curve; "latest" skips a torn newest checkpoint for the previous complete one and says so;
// save_total_limit prunes the oldest complete checkpoints, never the newest intact one.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "contract/file_system.h"
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
    // The gradient reducer's buckets (indices into the trainable parameters, each bucket in reduction
    // order): a run resumed on 3+ ranks reduces in them, so every sum adds the ranks in the same order as
    // the run it continues (dist/gradient_reducer.h). Empty: not recorded (one rank, sharded, older).
    std::vector<std::vector<size_t>> gradient_buckets;
};

// Writes checkpoint-<step> under `output_dir`. On failure (e.g. a full disk) nothing complete-looking is
// left and earlier checkpoints are untouched; the error says so.
Result<std::string> save_checkpoint(const std::string& output_dir, model::LlamaForCausalLM& model,
                                    FlatAdamW& optimizer, const std::vector<std::string>& trainable_names,
                                    const LoopPosition& position, FileSystem& fs = default_file_system());

// Sharded runs: every rank writes its own shards, rank 0 the rest. Rank 0 first creates the temporary
// folder (begin_checkpoint), then every rank writes shard-<rank>-of-<world>.safetensors into it
// (write_rank_shards: its shards, their AdamW moments, its RNG), then rank 0 writes state.json, renames the
// folder and writes DONE (finish_checkpoint). save_checkpoint is the same three steps on one process.
Result<std::string> begin_checkpoint(const std::string& output_dir, int64_t step,
                                     FileSystem& fs = default_file_system());
// The temporary folder begin_checkpoint creates (the other ranks write into it too).
std::string checkpoint_tmp_dir(const std::string& output_dir, int64_t step);
// Removes the temporary folder of an unfinished save; the error says why and that earlier ones are intact.
Status discard_checkpoint(const std::string& output_dir, const std::string& tmp_dir, int64_t step,
                          const std::string& why, FileSystem& fs = default_file_system());
[[nodiscard]] Status write_rank_shards(const std::string& tmp_dir, int64_t rank, int64_t world_size,
                                       const std::vector<std::string>& names,
                                       const std::vector<torch::Tensor>& shards, FlatAdamW& optimizer,
                                       FileSystem& fs = default_file_system());
Result<std::string> finish_checkpoint(const std::string& output_dir, const std::string& tmp_dir,
                                      FlatAdamW& optimizer, const std::vector<std::string>& trainable_names,
                                      const LoopPosition& position, bool sharded,
                                      FileSystem& fs = default_file_system());
// Restores this rank's shards, their optimizer state and its RNG. Another world size is refused, naming both.
Result<LoopPosition> load_sharded_checkpoint(const std::string& dir, int64_t rank, int64_t world_size,
                                             const std::vector<std::string>& names,
                                             const std::vector<torch::Tensor>& shards, FlatAdamW& optimizer);

// checkpoint-<step> under output_dir, and the step a checkpoint folder's name gives (-1 for another name).
std::string checkpoint_dir(const std::string& output_dir, int64_t step);
int64_t checkpoint_step(const std::string& dir);

// Whether a checkpoint folder is complete and intact: DONE is there, every file it records has its size
// (and state.json its XXH64), state.json parses. A DONE of the first format ("step N") records no files:
// then only state.json is checked. The error names the folder and what is wrong.
Status verify_checkpoint(const std::string& dir);

// "latest" -> the newest intact checkpoint under output_dir (an error when there is none); a newer torn one
// is skipped, and `notes` (when given) hears which and why. Otherwise the given folder, which must be
// intact.
Result<std::string> resolve_checkpoint(const std::string& request, const std::string& output_dir,
                                       std::ostream* notes = nullptr);

// Restores weights, optimizer state and RNG; returns the loop position. Refuses an incomplete or corrupt
// checkpoint, or one whose trainable parameters differ from this run's, naming the problem.
Result<LoopPosition> load_checkpoint(const std::string& dir, model::LlamaForCausalLM& model,
                                     FlatAdamW& optimizer, const std::vector<std::string>& trainable_names);

// Removes the checkpoints older than the `keep` newest intact ones (at least one is always kept; a torn one
// never counts); returns the removed folders (DONE is removed first, so a crash mid-removal leaves an
// incomplete folder, not a torn "complete" one). Call it only once the newest save has returned.
std::vector<std::string> prune_checkpoints(const std::string& output_dir, int64_t keep,
                                           FileSystem& fs = default_file_system());

}  // namespace slipway::train
