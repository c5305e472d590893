// A finished run's log (mllog.txt, a Slurm job's output, an MLPerf submission's log) written as TensorBoard
// events after the fact, the same points a live run writes: for runs that did not report_to tensorboard, and
// for logs from elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "contract/file_system.h"
#include "contract/mllog.h"
#include "contract/status.h"

namespace slipway::track {

struct LogExport {
    std::string event_file;  // the file written
    int64_t points = 0;      // scalars in it
    int64_t bad_lines = 0;   // ":::MLLOG " lines that did not parse (skipped)
};

// Reads every MLLOG line of `log_path` (text around them, and srun's "N: " prefixes, are skipped) and writes
// its numbers as scalars into a new event file in `dir`.
[[nodiscard]] Result<LogExport> export_log_to_tensorboard(const std::string& log_path, const std::string& dir,
                                                          FileSystem& fs = default_file_system());

// The same for events already read (a run's stored points, turned back into events); an error when none has
// a number.
[[nodiscard]] Result<LogExport> export_events_to_tensorboard(const std::vector<MllogEvent>& events,
                                                             const std::string& dir,
                                                             FileSystem& fs = default_file_system());

}  // namespace slipway::track
