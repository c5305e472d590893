// A stored run's curves written where teams look: RunMetrics (what the history keeps of any run, on this
// computer or a cluster, or a log opened by hand) turned back into the MLLOG events they came from, for the
// engine's TensorBoard writer.
#pragma once

#include <string>
#include <vector>

#include "contract/mllog.h"
#include "contract/status.h"
#include "core/run_metrics.h"
#include "track/log_export.h"

namespace slipway::app {

// The events of every stored point: train_loss, eval_accuracy, lr and tokens_per_second with their
// step_num / samples_count and time, and eval_task with its task and metric; in time order.
std::vector<MllogEvent> mllog_events_of(const RunMetrics& metrics);

// Writes them as a new TensorBoard event file in `dir`.
[[nodiscard]] Result<track::LogExport> export_to_tensorboard(const RunMetrics& metrics,
                                                             const std::string& dir);

}  // namespace slipway::app
