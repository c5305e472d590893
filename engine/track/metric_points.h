// What a run's MLLOG events become in the trackers teams share (TensorBoard, MLflow, W&B): scalar points
// named as HF Trainer's report_to names them (train/loss, train/learning_rate, eval/accuracy, ...), each at
// its step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/mllog.h"

namespace slipway::track {

struct MetricPoint {
    std::string tag;  // "train/loss"
    int64_t step = 0;
    double value = 0;
    double wall_time = 0;  // seconds since the Unix epoch; the event's time_ms
};

// A wall time in seconds as whole milliseconds since the Unix epoch (MLflow's timestamps, MLLOG's time_ms).
int64_t unix_ms(double wall_time);

// Stateful over one run's events: train/epoch needs train_samples, which the run logs once at its start.
class MetricNamer {
public:
    // The points of one event: none for events that carry no number (run_start, checkpoint_saved, ...).
    std::vector<MetricPoint> points(const MllogEvent& event);

private:
    std::optional<double> train_samples_;
};

// The tag of an MLLOG key with a number (train_loss -> train/loss); eval_task events are
// eval/<task>/<metric>, and keys without an HF name keep theirs under mllog/ (global_batch_size ->
// mllog/global_batch_size).
std::string metric_tag(const MllogEvent& event);

// The tags shown beside a run's hyperparameters (HParams, MLflow's summary, W&B's summary).
const std::vector<std::string>& summary_metric_tags();

}  // namespace slipway::track
