// A stored run's curves written where teams look: RunMetrics (what the history keeps of any run, on this
// computer or a cluster, or a log opened by hand) turned back into the MLLOG events they came from, for the
// engine's TensorBoard and MLflow writers.
#pragma once

#include <cstdint>
#include <optional>
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

// How a stored run ended, where the history knows: its run_stop.
struct RunEnd {
    bool succeeded = false;
    int64_t time_ms = 0;  // 0: unknown (the last point's time stands in)
};

// Writes them (and `end`'s run_stop) into the folder `out` as track::export_events does: TensorBoard events
// in out/<run_name>/, or a run named `run_name` in the MLflow file store `out`, ended as `end` says.
[[nodiscard]] Result<track::LogExport> export_run_metrics(const RunMetrics& metrics,
                                                          std::optional<RunEnd> end,
                                                          track::ExportFormat format, const std::string& out,
                                                          const std::string& run_name);

}  // namespace slipway::app
