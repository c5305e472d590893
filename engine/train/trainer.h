// train(): one process training a LLaMA-family model from a run config on its prepared token cache:
// AdamW + schedule + accumulation + clipping, eval every eval_steps, MLLOG lines and a readable progress
// line, and the final model written as an HF folder. Distributed training plugs in at the marked seams.
#pragma once

#include <iosfwd>
#include <string>

#include "contract/run_config.h"
#include "contract/status.h"

namespace slipway::train {

struct TrainOptions {
    int threads = 0;                 // torch intra-op threads (0 = all cores)
    std::string engine_version;      // written into run.json
    double progress_interval_s = 1;  // at most one progress line a second
    int64_t stop_after_steps = 0;    // test seam: stop (as if killed) after this many steps; 0 = off
};

struct TrainReport {
    int64_t steps = 0;
    double final_train_loss = 0;
    double final_eval_loss = 0;
    std::string status;  // success | aborted | fail
    std::string output_dir;
};

// `mllog` receives the MLLOG lines (they are also written to <output_dir>/mllog.txt); `progress`
// receives the human-readable lines.
Result<TrainReport> train(const RunConfig& config, const TrainOptions& options, std::ostream& mllog,
                          std::ostream& progress);

}  // namespace slipway::train
