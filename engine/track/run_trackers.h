// The trackers a run reports to (/training/report_to), fed by the run's own MLLOG events on rank 0. Nothing
// here can stop training: a target that fails (a full disk) is named in one warning, with what it did not
// receive, and is dropped; the MLLOG file still has everything.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/file_system.h"
#include "contract/mllog.h"
#include "contract/run_config.h"
#include "track/metric_points.h"
#include "track/tensorboard_events.h"

namespace slipway::track {

class Tracker;

// The targets the engine writes itself. "all" is every one of them; "none" (or an empty list) is none.
struct ReportTargets {
    bool tensorboard = false;
    bool mlflow = false;
};
ReportTargets report_targets(const std::vector<std::string>& report_to);
// A run's name as one folder name: '/' becomes '_', and an empty name is "run".
std::string run_folder_name(std::string name);
// The run's TensorBoard folder: /training/logging_dir, else <output_dir>/runs/<name> (HF's layout).
std::string tensorboard_dir(const RunConfig& config);
// The run config's fields as "section.key" -> value (top-level values keep their key).
std::vector<std::pair<std::string, nlohmann::ordered_json>> config_fields(const RunConfig& config);
// The same as hyperparameters: numbers, strings and bools; lists and maps as JSON text.
HParams config_hparams(const RunConfig& config);

class RunTrackers {
public:
    using Warn = std::function<void(const std::string& message)>;

    // `fresh`: the run starts from step 0 (no resume). Its default TensorBoard folder then drops the event
    // files an earlier run of the same output_dir left, as mllog.txt is started again, and MLflow gets a
    // new run; a resumed run adds a TensorBoard file beside the earlier ones and goes on in its MLflow run.
    // A logging_dir the config names is never cleared.
    RunTrackers(const RunConfig& config, Warn warn, bool fresh, FileSystem& fs = default_file_system());
    ~RunTrackers();
    RunTrackers(const RunTrackers&) = delete;
    RunTrackers& operator=(const RunTrackers&) = delete;

    // One MLLOG event of the run, in order. run_stop ends each target (the run's status) and closes it.
    void on_event(const MllogEvent& event);
    // Where each target writes, for the run's log ("tensorboard: <folder>").
    std::vector<std::string> destinations() const;

private:
    struct Target {
        std::unique_ptr<Tracker> tracker;  // null once it ended or failed
        std::string destination;           // "tensorboard: <folder>"
        bool started = false;
    };
    void add(std::unique_ptr<Tracker> tracker);
    void feed(Target& target, const MllogEvent& event, const std::vector<MetricPoint>& points);
    void failed(Target& target, const Status& status, const std::string& lost);

    RunConfig config_;
    Warn warn_;
    MetricNamer namer_;
    std::vector<Target> targets_;
};

}  // namespace slipway::track
