// A finished run's log (mllog.txt, a Slurm job's output, an MLPerf submission's log) written where teams look
// after the fact, the same points a live run writes: as TensorBoard events or as an MLflow file store run,
// for runs that did not report_to them, and for logs from elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "contract/file_system.h"
#include "contract/mllog.h"
#include "contract/status.h"

namespace slipway::track {

enum class ExportFormat { kTensorBoard, kMlflow };

struct LogExport {
    std::string written;    // the event file, or the MLflow run's folder
    int64_t points = 0;     // metric points in it
    int64_t bad_lines = 0;  // ":::MLLOG " lines that did not parse (skipped)
};

// Into the folder `out` a user chose, as a run named `run_name`. TensorBoard: a new event file in
// out/<run_folder_name(run_name)>/, so one --logdir shows every exported run. MLflow: a new run in the file
// store `out` (its Default experiment), FINISHED or FAILED as the events' run_stop says, else still RUNNING.
// An error when no event has a number.
[[nodiscard]] Result<LogExport> export_events(const std::vector<MllogEvent>& events, ExportFormat format,
                                              const std::string& out, const std::string& run_name,
                                              FileSystem& fs = default_file_system());

// Reads every MLLOG line of `log_path` (text around them, and srun's "N: " prefixes, are skipped) and writes
// its numbers as export_events does.
[[nodiscard]] Result<LogExport> export_log(const std::string& log_path, ExportFormat format,
                                           const std::string& dir, const std::string& run_name,
                                           FileSystem& fs = default_file_system());

}  // namespace slipway::track
