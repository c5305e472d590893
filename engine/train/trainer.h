// train(): one process training a LLaMA-family model from a run config on its prepared token cache:
// AdamW + schedule + accumulation + clipping, eval every eval_steps, MLLOG lines and a readable progress
// line, and the final model written as an HF folder. With several ranks (options.dist_env) each process
// trains on its own shard, gradients are averaged by DDP's Reducer, losses and metrics are averaged over
// ranks, and only rank 0 writes MLLOG, checkpoints and outputs.
#pragma once

#include <atomic>
#include <iosfwd>
#include <string>

#include "contract/run_config.h"
#include "contract/status.h"
#include "dist/env.h"

namespace slipway::train {

struct TrainOptions {
    int threads = 0;                 // torch intra-op threads (0 = all cores)
    std::string engine_version;      // written into run.json
    double progress_interval_s = 1;  // at most one progress line a second
    // A run on several nodes: rank 0 logs each node's heartbeat step ("node_steps") at the first logged step,
    // then at most this often (every second while a node has not reported one).
    double node_steps_interval_s = 10;
    int64_t stop_after_steps = 0;  // test seam: stop (as if killed) after this many steps; 0 = off
    dist::DistEnv dist_env;        // this process's rank; world_size 1 = a single process
    // Set by a SIGTERM handler (scancel, Slurm's time limit): all ranks stop after the current step, rank 0
    // saves a checkpoint and logs run_stop with status aborted.
    const std::atomic<bool>* stop_requested = nullptr;
    // A restarted job (train --resume-latest-if-any, a requeue after a time limit or a preemption): resume
    // from the newest checkpoint in output_dir when there is one (rank 0's view), else as the config says;
    // mllog.txt is appended to either way, and the resume is logged with `restart`.
    bool resume_latest_if_any = false;
    int64_t restart = 0;  // the job's restart number (Slurm's SLURM_RESTART_COUNT)
};

struct TrainReport {
    int64_t steps = 0;
    double final_train_loss = 0;
    double final_eval_loss = 0;
    std::string status;        // success | aborted | fail
    bool interrupted = false;  // stopped by stop_requested
    std::string output_dir;
};

// `mllog` receives the MLLOG lines (they are also written to <output_dir>/mllog.txt); `progress`
// receives the human-readable lines. Only rank 0 writes to either. A lost or frozen rank is an error with
// code kUnavailable naming the rank and the step. Any other exception (out of memory, a shape error, a
// filesystem error) is an error naming the cause, logged as run_stop status fail with metadata.error;
// with several ranks the others stop too, naming the rank that failed and its cause. After an error in
// a multi-rank run the process should exit without unwinding the communication threads (the train command
// does). Nothing escapes as an exception.
Result<TrainReport> train(const RunConfig& config, const TrainOptions& options, std::ostream& mllog,
                          std::ostream& progress);

}  // namespace slipway::train
