// The curves of one run as the monitor plots them: train_loss, eval_accuracy, lr and tokens/s points, each
// with every x it can be drawn against (samples, step, wall time), folded from MLLOG events as they arrive.
// Plain C++ (no Qt): the follower, the history and the benchmark share it.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contract/mllog.h"
#include "contract/node_ranks.h"

namespace slipway::app {

enum class Metric { kTrainLoss = 0, kEvalAccuracy, kLearningRate, kTokensPerSecond };
inline constexpr int kMetricCount = 4;
inline constexpr std::array<Metric, kMetricCount> kAllMetrics = {
    Metric::kTrainLoss, Metric::kEvalAccuracy, Metric::kLearningRate, Metric::kTokensPerSecond};

std::string_view metric_key(Metric metric);  // the MLLOG key: "train_loss", "eval_accuracy", "lr", ...
const char* metric_title(Metric metric);     // for axes and legends: "tokens/s" rather than the key
std::optional<Metric> metric_for_key(std::string_view key);

// What a log's eval_accuracy measures. MLPerf's llama2_70b_lora logs the evaluation loss under that key,
// and so does the engine with eval.metric "loss"; the engine also logs eval_loss and eval_token_accuracy
// just before it, so the value says which one it is.
enum class EvalMeaning { kUnknown = 0, kLoss, kTokenAccuracy };
// The eval plot's title and the status line's name: "eval loss (MLPerf eval_accuracy)",
// "eval token accuracy", or plain "eval_accuracy" when the log does not say.
const char* eval_title(EvalMeaning meaning);

enum class XAxis { kSamples = 0, kSteps, kWallTime };
const char* x_axis_title(XAxis axis);  // "samples", "step", "wall time (s)"

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

struct MetricSample {
    double samples = kUnknown;  // metadata.samples_count
    double step = kUnknown;     // metadata.step_num
    int64_t time_ms = 0;        // the event's time_ms
    double value = 0;
};

// One point of one curve, as a run's row stores it.
using MetricPointRow = std::pair<Metric, MetricSample>;

// The eval_task metrics come in two families that differ by orders of magnitude, so each has its own plot:
// scores in [0, 1] (acc, acc_norm, exact_match, prefix_match) and perplexity / NLL (log y).
enum class TaskFamily { kScore = 0, kPerplexity };
inline constexpr int kTaskFamilyCount = 2;
TaskFamily task_family(std::string_view series);  // of "task/metric"; an unknown metric is a score

// The points of one eval_task series ("task/metric", e.g. "copy/exact_match"), one per evaluation.
struct TaskSeries {
    std::string name;
    std::vector<MetricSample> points;
};

struct RunMetrics {
    std::array<std::vector<MetricSample>, kMetricCount> series;
    std::vector<TaskSeries> task_series;  // in the order the log first names them
    std::optional<int64_t> run_start_ms;  // the first run_start (else the first event's time: wall-time axis)
    std::optional<int64_t> first_time_ms;
    std::optional<int64_t> last_time_ms;
    std::optional<int64_t> run_stop_ms;
    std::optional<std::string> status;  // run_stop's metadata.status
    std::string benchmark;              // submission_benchmark, e.g. llama2_70b_lora
    std::optional<double> global_batch_size;
    std::optional<double> total_steps;  // opt_learning_rate_training_steps
    std::optional<double> last_step;    // the highest step_num seen
    // The eval_accuracy target: the run config's eval.target, or the MLPerf benchmark's quality target.
    std::optional<double> target;
    bool target_higher_is_better = false;
    EvalMeaning eval_meaning = EvalMeaning::kUnknown;
    std::optional<double> last_eval_loss;            // the engine's eval_loss, logged before eval_accuracy
    std::optional<double> last_eval_token_accuracy;  // and its eval_token_accuracy
    // Where a restarted job (requeued after its time limit or a preemption) resumed: the engine's "resume"
    // events, value = the step it resumed at. The curve goes on from there (the steps after it that the
    // stopped segment logged are logged again, equal); the plots mark the segments, and a run_stop before
    // a resume no longer counts.
    std::vector<MetricSample> resumes;
    // Which ranks run on which node (the engine's "node_ranks", multi-rank runs), and the nodes of the ranks
    // the run lost (run_stop's "lost_nodes"; a resume clears them).
    std::vector<NodeRanks> nodes;
    std::vector<std::string> lost_nodes;
    // Each node's last heartbeat step (the engine's "node_steps", runs on several nodes; now and then).
    std::vector<NodeStep> node_steps;

    // Folds one event in (eval_task points go to task_series). Returns the metric a point was added to, if
    // any. Points whose value is not a number are skipped; points without samples_count are kept (drawn
    // against step or time instead).
    std::optional<Metric> add(const MllogEvent& event);

    const std::vector<MetricSample>& points(Metric metric) const {
        return series[static_cast<size_t>(metric)];
    }
    std::vector<MetricSample>& points(Metric metric) { return series[static_cast<size_t>(metric)]; }
    size_t total_points() const;  // the four metrics' points

    // The point's x on `axis`, NaN when the log does not say (steps fall back to samples / global batch).
    double x_of(const MetricSample& sample, XAxis axis) const;

    // Share of the run done (last step / total steps), when both are known.
    std::optional<double> progress() const;
    // Milliseconds from run start to the last event, and the estimate of what remains from progress().
    std::optional<int64_t> elapsed_ms() const;
    std::optional<int64_t> eta_ms() const;

    // True when `value` meets the target (<= for losses, >= for accuracies).
    bool meets_target(double value) const;
};

// The quality target MLPerf sets for a benchmark (eval_accuracy), when we know it: llama2_70b_lora's
// eval loss <= 0.925. `higher_is_better` is set accordingly.
std::optional<double> mlperf_target(std::string_view benchmark, bool* higher_is_better);

}  // namespace slipway::app
