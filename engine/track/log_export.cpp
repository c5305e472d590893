// Replays MLLOG events through the live run's namer into one event file.
#include "track/log_export.h"

#include <fstream>

#include "track/metric_points.h"
#include "track/tensorboard_writer.h"

namespace slipway::track {

Result<LogExport> export_events_to_tensorboard(const std::vector<MllogEvent>& events, const std::string& dir,
                                               FileSystem& fs) {
    MetricNamer namer;
    std::vector<MetricPoint> points;
    for (const MllogEvent& event : events)
        for (MetricPoint& point : namer.points(event))
            points.push_back(std::move(point));
    if (points.empty()) return Status::Error("no MLLOG event with a number to export");
    // The file's time is the first point's, as a live run's is its start.
    Result<std::unique_ptr<TensorBoardWriter>> opened =
        TensorBoardWriter::open(dir, points.front().wall_time, fs);
    if (!opened.ok()) return opened.status();
    TensorBoardWriter& writer = **opened;
    LogExport result;
    for (const MetricPoint& point : points) {
        if (Status s = writer.scalar(point.tag, point.step, point.value, point.wall_time); !s.ok()) return s;
        ++result.points;
    }
    result.event_file = writer.path();
    if (Status closed = writer.close(); !closed.ok()) return closed;
    return result;
}

Result<LogExport> export_log_to_tensorboard(const std::string& log_path, const std::string& dir,
                                            FileSystem& fs) {
    std::ifstream in(log_path, std::ios::binary);
    if (!in) return Status::Error("cannot read " + log_path);
    std::vector<MllogEvent> events;
    int64_t bad_lines = 0;
    std::string line;
    while (std::getline(in, line)) {
        MllogParseResult parsed = parse_mllog_line(line);
        if (parsed.kind == MllogLineKind::kBadMllog) ++bad_lines;
        if (parsed.kind == MllogLineKind::kEvent) events.push_back(std::move(parsed.event));
    }
    if (events.empty()) return Status::Error(log_path + " has no MLLOG line");
    Result<LogExport> written = export_events_to_tensorboard(events, dir, fs);
    if (written.ok()) written->bad_lines = bad_lines;
    return written;
}

}  // namespace slipway::track
