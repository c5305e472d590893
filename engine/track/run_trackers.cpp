// Fans a run's MLLOG events out to its trackers, starting each at the first event and ending it at
// run_stop.
#include "track/run_trackers.h"

#include <algorithm>

#include "track/mlflow_tracker.h"
#include "track/tensorboard_tracker.h"
#include "track/tracker.h"

namespace slipway::track {
namespace {

using Fields = std::vector<std::pair<std::string, nlohmann::ordered_json>>;

void flatten(const std::string& prefix, const nlohmann::ordered_json& node, Fields& out) {
    for (auto it = node.begin(); it != node.end(); ++it) {
        const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it.value().is_object() && prefix.empty())
            flatten(name, it.value(), out);  // a section: its fields are the hyperparameters
        else if (!it.value().is_null())
            out.emplace_back(name, it.value());
    }
}

}  // namespace

ReportTargets report_targets(const std::vector<std::string>& report_to) {
    ReportTargets targets;
    for (const std::string& name : report_to) {
        if (name == "tensorboard" || name == "all") targets.tensorboard = true;
        if (name == "mlflow" || name == "all") targets.mlflow = true;
    }
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

Fields config_fields(const RunConfig& config) {
    Fields out;
    flatten("", to_json(config), out);
    return out;
}

HParams config_hparams(const RunConfig& config) {
    HParams out;
    for (const auto& [name, value] : config_fields(config)) {
        if (value.is_boolean())
            out.emplace_back(name, value.get<bool>());
        else if (value.is_number())
            out.emplace_back(name, value.get<double>());
        else if (value.is_string())
            out.emplace_back(name, value.get<std::string>());
        else
            out.emplace_back(name, value.dump());
    }
    return out;
}

RunTrackers::RunTrackers(const RunConfig& config, Warn warn, bool fresh, FileSystem& fs)
    : config_(config), warn_(std::move(warn)) {
    const ReportTargets wanted = report_targets(config.training.report_to);
    if (wanted.tensorboard) add(std::make_unique<TensorBoardTracker>(config_, fresh, warn_, fs));
    if (wanted.mlflow) add(std::make_unique<MlflowTracker>(config_, fresh, fs));
}

void RunTrackers::add(std::unique_ptr<Tracker> tracker) {
    std::string destination = tracker->name() + ": " + tracker->where();
    targets_.push_back({std::move(tracker), std::move(destination)});
}

RunTrackers::~RunTrackers() = default;

std::vector<std::string> RunTrackers::destinations() const {
    std::vector<std::string> out;
    for (const Target& target : targets_)
        out.push_back(target.destination);
    return out;
}

void RunTrackers::failed(Target& target, const Status& status, const std::string& lost) {
    warn_(target.tracker->name() + ": " + status.message() + "; " + lost + " and what follows are not in " +
          target.tracker->lacking() + " (mllog.txt has them)");
    target.tracker.reset();
}

void RunTrackers::feed(Target& target, const MllogEvent& event, const std::vector<MetricPoint>& points) {
    const double wall_time = static_cast<double>(event.time_ms) / 1000.0;
    if (!target.started) {
        target.started = true;
        if (Status s = target.tracker->start(wall_time); !s.ok()) return failed(target, s, "the whole run");
    }
    for (const MetricPoint& point : points)
        if (Status s = target.tracker->point(point); !s.ok())
            return failed(target, s, point.tag + " at step " + std::to_string(point.step));
    if (event.key == mllog_key::kRunStop) {
        const bool succeeded =
            event.metadata_string(mllog_field::kStatus).value_or("") == run_stop_status::kSuccess;
        if (Status s = target.tracker->finish(succeeded, wall_time); !s.ok())
            return failed(target, s, "the run's end");
        target.tracker.reset();
    }
}

void RunTrackers::on_event(const MllogEvent& event) {
    if (targets_.empty()) return;
    const std::vector<MetricPoint> points = namer_.points(event);
    for (Target& target : targets_)
        if (target.tracker != nullptr) feed(target, event, points);
}

}  // namespace slipway::track
