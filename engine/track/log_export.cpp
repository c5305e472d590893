// Replays MLLOG events through the live run's namer into one event file or one MLflow run.
#include "track/log_export.h"

#include <fstream>

#include "track/metric_points.h"
#include "track/mlflow_store.h"
#include "track/run_trackers.h"
#include "track/tensorboard_writer.h"

namespace slipway::track {
namespace {

Result<std::string> write_tensorboard(const std::vector<MetricPoint>& points, const std::string& dir,
                                      FileSystem& fs) {
    // The file's time is the first point's, as a live run's is its start.
    Result<std::unique_ptr<TensorBoardWriter>> opened =
        TensorBoardWriter::open(dir, points.front().wall_time, fs);
    if (!opened.ok()) return opened.status();
    TensorBoardWriter& writer = **opened;
    for (const MetricPoint& point : points)
        if (Status s = writer.scalar(point.tag, point.step, point.value, point.wall_time); !s.ok()) return s;
    if (Status closed = writer.close(); !closed.ok()) return closed;
    return writer.path();
}

Result<std::string> write_mlflow(const std::vector<MllogEvent>& events,
                                 const std::vector<MetricPoint>& points, const std::string& dir,
                                 const std::string& run_name, FileSystem& fs) {
    Result<std::unique_ptr<MlflowRun>> created =
        MlflowRun::create(dir, run_name, static_cast<int64_t>(events.front().time_ms), fs);
    if (!created.ok()) return created.status();
    MlflowRun& run = **created;
    if (Status s = run.tag("mlflow.source.name", "slipway logs"); !s.ok()) return s;
    for (const MetricPoint& point : points)
        if (Status s = run.metric(point.tag, point.value, unix_ms(point.wall_time), point.step); !s.ok())
            return s;
    for (const MllogEvent& event : events) {
        if (event.key != mllog_key::kRunStop) continue;
        const bool succeeded =
            event.metadata_string(mllog_field::kStatus).value_or("") == run_stop_status::kSuccess;
        const MlflowRunStatus status = succeeded ? MlflowRunStatus::kFinished : MlflowRunStatus::kFailed;
        if (Status s = run.terminate(status, static_cast<int64_t>(event.time_ms)); !s.ok()) return s;
    }
    return run.run_dir();
}

}  // namespace

Result<LogExport> export_events(const std::vector<MllogEvent>& events, ExportFormat format,
                                const std::string& out, const std::string& run_name, FileSystem& fs) {
    MetricNamer namer;
    std::vector<MetricPoint> points;
    for (const MllogEvent& event : events)
        for (MetricPoint& point : namer.points(event))
            points.push_back(std::move(point));
    if (points.empty()) return Status::Error("no MLLOG event with a number to export");
    Result<std::string> written = format == ExportFormat::kTensorBoard
                                      ? write_tensorboard(points, out + "/" + run_folder_name(run_name), fs)
                                      : write_mlflow(events, points, out, run_name, fs);
    if (!written.ok()) return written.status();
    LogExport result;
    result.written = *written;
    result.points = static_cast<int64_t>(points.size());
    return result;
}

Result<LogExport> export_log(const std::string& log_path, ExportFormat format, const std::string& out,
                             const std::string& run_name, FileSystem& fs) {
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
    Result<LogExport> written = export_events(events, format, out, run_name, fs);
    if (written.ok()) written->bad_lines = bad_lines;
    return written;
}

}  // namespace slipway::track
