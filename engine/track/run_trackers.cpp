// Fans a run's MLLOG events out to its trackers, opening each lazily at the first event and closing it at
// run_stop.
#include "track/run_trackers.h"

#include <algorithm>
#include <filesystem>

#include "track/tensorboard_writer.h"

namespace slipway::track {
namespace {

void flatten(const std::string& prefix, const nlohmann::ordered_json& node, HParams& out) {
    for (auto it = node.begin(); it != node.end(); ++it) {
        const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
        const nlohmann::ordered_json& value = it.value();
        if (value.is_object() && prefix.empty()) {
            flatten(name, value, out);  // a section: its fields are the hyperparameters
        } else if (value.is_boolean()) {
            out.emplace_back(name, value.get<bool>());
        } else if (value.is_number()) {
            out.emplace_back(name, value.get<double>());
        } else if (value.is_string()) {
            out.emplace_back(name, value.get<std::string>());
        } else if (!value.is_null()) {
            out.emplace_back(name, value.dump());
        }
    }
}

}  // namespace

ReportTargets report_targets(const std::vector<std::string>& report_to) {
    ReportTargets targets;
    for (const std::string& name : report_to)
        if (name == "tensorboard" || name == "all") targets.tensorboard = true;
    return targets;
}

std::string run_folder_name(std::string name) {
    if (name.empty()) return "run";
    std::replace(name.begin(), name.end(), '/', '_');
    return name;
}

std::string tensorboard_dir(const RunConfig& config) {
    if (!config.training.logging_dir.empty()) return config.training.logging_dir;
    return config.training.output_dir + "/runs/" + run_folder_name(config.name);
}

HParams config_hparams(const RunConfig& config) {
    HParams out;
    flatten("", to_json(config), out);
    return out;
}

RunTrackers::RunTrackers(const RunConfig& config, Warn warn, bool fresh, FileSystem& fs)
    : config_(config), warn_(std::move(warn)), fs_(fs) {
    wants_tensorboard_ = report_targets(config.training.report_to).tensorboard;
    if (wants_tensorboard_ && fresh && config.training.logging_dir.empty()) remove_earlier_event_files();
}

void RunTrackers::remove_earlier_event_files() {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(tensorboard_dir(config_), ec)) {
        if (entry.path().filename().string().rfind("events.out.tfevents.", 0) != 0) continue;
        if (std::filesystem::remove(entry.path(), ec); ec)
            warn_("tensorboard: cannot remove the earlier run's " + entry.path().string() + ": " +
                  ec.message() + " (TensorBoard shows both runs' points as one)");
    }
}

RunTrackers::~RunTrackers() = default;

std::vector<std::string> RunTrackers::destinations() const {
    std::vector<std::string> out;
    if (wants_tensorboard_) out.push_back("tensorboard: " + tensorboard_dir(config_));
    return out;
}

void RunTrackers::tensorboard_failed(const Status& status, const std::string& lost) {
    warn_("tensorboard: " + status.message() + "; " + lost +
          " and what follows are not in TensorBoard (mllog.txt has them)");
    tensorboard_.reset();
    wants_tensorboard_ = false;
}

void RunTrackers::start_tensorboard(double wall_time) {
    tensorboard_started_ = true;
    Result<std::unique_ptr<TensorBoardWriter>> opened =
        TensorBoardWriter::open(tensorboard_dir(config_), wall_time, fs_);
    if (!opened.ok()) return tensorboard_failed(opened.status(), "the whole run");
    tensorboard_ = std::move(*opened);
    Status s = tensorboard_->text("run_config", 0, to_json(config_).dump(2), wall_time);
    if (s.ok()) s = tensorboard_->hparams(config_hparams(config_), summary_metric_tags(), wall_time);
    if (!s.ok()) tensorboard_failed(s, "the run config");
}

void RunTrackers::on_event(const MllogEvent& event) {
    if (!wants_tensorboard_) return;
    const double wall_time = static_cast<double>(event.time_ms) / 1000.0;
    if (!tensorboard_started_) start_tensorboard(wall_time);
    if (tensorboard_ == nullptr) return;
    for (const MetricPoint& point : namer_.points(event)) {
        const Status s = tensorboard_->scalar(point.tag, point.step, point.value, point.wall_time);
        if (!s.ok()) return tensorboard_failed(s, point.tag + " at step " + std::to_string(point.step));
    }
    if (event.key == mllog_key::kRunStop) {
        const bool succeeded =
            event.metadata_string(mllog_field::kStatus).value_or("") == run_stop_status::kSuccess;
        Status s = tensorboard_->session_end(succeeded, wall_time);
        const Status closed = tensorboard_->close();
        if (s.ok()) s = closed;
        if (!s.ok()) return tensorboard_failed(s, "the run's end");
        tensorboard_.reset();
    }
}

}  // namespace slipway::track
