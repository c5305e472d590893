// The run's MLflow run: created (or reopened when resumed) at its first event, terminated at run_stop.
#include "track/mlflow_tracker.h"

#include "track/mlflow_store.h"
#include "track/run_trackers.h"

namespace slipway::track {
namespace {

// A param's text: strings as they are, other values as the run config's JSON writes them (8, 0.0002, true).
std::string param_text(const nlohmann::ordered_json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

std::string mlflow_store_dir(const RunConfig& config) {
    return config.training.output_dir + "/mlruns";
}

MlflowTracker::MlflowTracker(const RunConfig& config, bool fresh, FileSystem& fs)
    : config_(config), fresh_(fresh), fs_(fs) {}

MlflowTracker::~MlflowTracker() = default;

Status MlflowTracker::start(double wall_time) {
    const std::string name = run_folder_name(config_.name);
    if (!fresh_) {
        Result<std::optional<std::unique_ptr<MlflowRun>>> reopened =
            MlflowRun::reopen_latest(where(), name, fs_);
        if (!reopened.ok()) return reopened.status();
        if (reopened->has_value()) {
            run_ = std::move(**reopened);
            return Status::Ok();  // its params and config are the ones it started with
        }
    }
    Result<std::unique_ptr<MlflowRun>> created = MlflowRun::create(where(), name, unix_ms(wall_time), fs_);
    if (!created.ok()) return created.status();
    run_ = std::move(*created);
    return log_config();
}

Status MlflowTracker::log_config() {
    if (Status s = run_->tag("mlflow.source.name", "slipway-engine"); !s.ok()) return s;
    if (Status s = run_->tag("mlflow.source.type", "LOCAL"); !s.ok()) return s;
    for (const auto& [key, value] : config_fields(config_))
        if (Status s = run_->param(key, param_text(value)); !s.ok()) return s;
    return run_->artifact("run_config.json", to_json(config_).dump(2) + "\n");
}

Status MlflowTracker::point(const MetricPoint& point) {
    return run_->metric(point.tag, point.value, unix_ms(point.wall_time), point.step);
}

Status MlflowTracker::finish(bool succeeded, double wall_time) {
    return run_->terminate(succeeded ? MlflowRunStatus::kFinished : MlflowRunStatus::kFailed,
                           unix_ms(wall_time));
}

}  // namespace slipway::track
