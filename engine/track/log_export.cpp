// Replays a log's MLLOG events through the live run's namer into one event file.
#include "track/log_export.h"

#include <fstream>

#include "contract/mllog.h"
#include "track/metric_points.h"
#include "track/tensorboard_writer.h"

namespace slipway::track {

Result<LogExport> export_log_to_tensorboard(const std::string& log_path, const std::string& dir,
                                            FileSystem& fs) {
    std::ifstream in(log_path, std::ios::binary);
    if (!in) return Status::Error("cannot read " + log_path);
    std::unique_ptr<TensorBoardWriter> writer;
    LogExport result;
    MetricNamer namer;
    std::string line;
    while (std::getline(in, line)) {
        const MllogParseResult parsed = parse_mllog_line(line);
        if (parsed.kind == MllogLineKind::kBadMllog) ++result.bad_lines;
        if (parsed.kind != MllogLineKind::kEvent) continue;
        const double wall_time = static_cast<double>(parsed.event.time_ms) / 1000.0;
        if (writer == nullptr) {  // the file's time is the log's first event's, as the live run's is
            Result<std::unique_ptr<TensorBoardWriter>> opened = TensorBoardWriter::open(dir, wall_time, fs);
            if (!opened.ok()) return opened.status();
            writer = std::move(*opened);
        }
        for (const MetricPoint& point : namer.points(parsed.event)) {
            if (Status s = writer->scalar(point.tag, point.step, point.value, point.wall_time); !s.ok())
                return s;
            ++result.points;
        }
    }
    if (writer == nullptr) return Status::Error(log_path + " has no MLLOG line");
    result.event_file = writer->path();
    if (Status closed = writer->close(); !closed.ok()) return closed;
    return result;
}

}  // namespace slipway::track
