// The run's TensorBoard event file: opened at the run's first event, closed at run_stop.
#include "track/tensorboard_tracker.h"

#include <filesystem>

#include "track/run_trackers.h"
#include "track/tensorboard_writer.h"

namespace slipway::track {

TensorBoardTracker::TensorBoardTracker(const RunConfig& config, bool fresh,
                                       const std::function<void(const std::string&)>& warn, FileSystem& fs)
    : config_(config), fs_(fs) {
    if (fresh && config.training.logging_dir.empty()) remove_earlier_event_files(warn);
}

TensorBoardTracker::~TensorBoardTracker() = default;

std::string TensorBoardTracker::where() const {
    return tensorboard_dir(config_);
}

void TensorBoardTracker::remove_earlier_event_files(const std::function<void(const std::string&)>& warn) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(tensorboard_dir(config_), ec)) {
        if (entry.path().filename().string().rfind("events.out.tfevents.", 0) != 0) continue;
        if (std::filesystem::remove(entry.path(), ec); ec)
            warn("tensorboard: cannot remove the earlier run's " + entry.path().string() + ": " +
                 ec.message() + " (TensorBoard shows both runs' points as one)");
    }
}

Status TensorBoardTracker::start(double wall_time) {
    Result<std::unique_ptr<TensorBoardWriter>> opened = TensorBoardWriter::open(where(), wall_time, fs_);
    if (!opened.ok()) return opened.status();
    writer_ = std::move(*opened);
    if (Status s = writer_->text("run_config", 0, to_json(config_).dump(2), wall_time); !s.ok()) return s;
    return writer_->hparams(config_hparams(config_), summary_metric_tags(), wall_time);
}

Status TensorBoardTracker::point(const MetricPoint& point) {
    return writer_->scalar(point.tag, point.step, point.value, point.wall_time);
}

Status TensorBoardTracker::finish(bool succeeded, double wall_time) {
    Status s = writer_->session_end(succeeded, wall_time);
    const Status closed = writer_->close();
    if (s.ok()) s = closed;
    return s;
}

}  // namespace slipway::track
