// The names of the MLLOG contract (design.md section 3): the keys the engine logs and the metadata fields
// its readers look at. The engine writes them and remote/ and app/ read them through these constants, so a
// key is spelled once and a rename cannot leave a reader behind.
#pragma once

#include <string_view>

namespace slipway::mllog_key {

// Intervals: initialisation, the run, each evaluation, and each MLPerf block.
inline constexpr std::string_view kInitStart = "init_start";
inline constexpr std::string_view kInitStop = "init_stop";
inline constexpr std::string_view kRunStart = "run_start";
inline constexpr std::string_view kRunStop = "run_stop";  // metadata: status, step_num; error, lost_* on fail
inline constexpr std::string_view kEvalStart = "eval_start";
inline constexpr std::string_view kEvalStop = "eval_stop";
inline constexpr std::string_view kBlockStart = "block_start";
inline constexpr std::string_view kBlockStop = "block_stop";

// The run's settings, logged once after init_stop.
inline constexpr std::string_view kGlobalBatchSize = "global_batch_size";
inline constexpr std::string_view kOptBaseLearningRate = "opt_base_learning_rate";
inline constexpr std::string_view kLoraRank = "lora_rank";
inline constexpr std::string_view kLoraAlpha = "lora_alpha";
inline constexpr std::string_view kGradientAccumulationSteps = "gradient_accumulation_steps";
inline constexpr std::string_view kOptGradientClipNorm = "opt_gradient_clip_norm";
inline constexpr std::string_view kOptAdamwWeightDecay = "opt_adamw_weight_decay";
inline constexpr std::string_view kOptLearningRateTrainingSteps = "opt_learning_rate_training_steps";
inline constexpr std::string_view kOptLearningRateWarmupSteps = "opt_learning_rate_warmup_steps";
inline constexpr std::string_view kSeed = "seed";
inline constexpr std::string_view kTrainSamples = "train_samples";
inline constexpr std::string_view kEvalSamples = "eval_samples";
inline constexpr std::string_view kCacheClear = "cache_clear";
inline constexpr std::string_view kSubmissionBenchmark = "submission_benchmark";
inline constexpr std::string_view kSubmissionOrg = "submission_org";
inline constexpr std::string_view kSubmissionDivision = "submission_division";
inline constexpr std::string_view kSubmissionStatus = "submission_status";
inline constexpr std::string_view kSubmissionPlatform = "submission_platform";

// Where a restarted job resumed (value: the step; metadata: checkpoint, restart), which ranks run on which
// node (value: {"node": [ranks]}) and, now and then while a run on several nodes trains, each node's last
// heartbeat step (value: {"node": step or null}; engine/contract/node_ranks.h).
inline constexpr std::string_view kResume = "resume";
inline constexpr std::string_view kNodeRanks = "node_ranks";
inline constexpr std::string_view kNodeSteps = "node_steps";

// Points of the curves, each with metadata samples_count and step_num.
inline constexpr std::string_view kTrainLoss = "train_loss";
inline constexpr std::string_view kLearningRate = "lr";
inline constexpr std::string_view kGradNorm = "grad_norm";
inline constexpr std::string_view kTokensPerSecond = "tokens_per_second";
inline constexpr std::string_view kEvalLoss = "eval_loss";
inline constexpr std::string_view kEvalTokenAccuracy = "eval_token_accuracy";
inline constexpr std::string_view kEvalAccuracy = "eval_accuracy";
// One metric of one evaluation task (/eval/tasks, engine/eval/README.md); metadata task, metric.
inline constexpr std::string_view kEvalTask = "eval_task";
inline constexpr std::string_view kCheckpointSaved = "checkpoint_saved";  // value: the checkpoint's folder

}  // namespace slipway::mllog_key

// Metadata fields of those events.
namespace slipway::mllog_field {

inline constexpr std::string_view kStatus = "status";  // run_stop: success | aborted | fail
inline constexpr std::string_view kStepNum = "step_num";
inline constexpr std::string_view kSamplesCount = "samples_count";
inline constexpr std::string_view kError = "error";  // run_stop on fail
inline constexpr std::string_view kLostRanks =
    "lost_ranks";  // run_stop on fail: ranks that stopped answering
inline constexpr std::string_view kLostNodes = "lost_nodes";   // run_stop on fail: their nodes
inline constexpr std::string_view kTask = "task";              // eval_task
inline constexpr std::string_view kMetric = "metric";          // eval_task
inline constexpr std::string_view kCheckpoint = "checkpoint";  // resume
inline constexpr std::string_view kRestart = "restart";        // resume

}  // namespace slipway::mllog_field

// run_stop's status values.
namespace slipway::run_stop_status {

inline constexpr std::string_view kSuccess = "success";
inline constexpr std::string_view kAborted =
    "aborted";                                     // stopped early: a signal, a stop file, a missed target
inline constexpr std::string_view kFail = "fail";  // an error ended the run

}  // namespace slipway::run_stop_status
