// The trackers a run reports to (/training/report_to), fed by the run's own MLLOG events on rank 0. Nothing
// here can stop training: a target that fails (a full disk) is named in one warning, with what it did not
// receive, and is dropped; the MLLOG file still has everything.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "contract/file_system.h"
#include "contract/mllog.h"
#include "contract/run_config.h"
#include "track/metric_points.h"
#include "track/tensorboard_events.h"

namespace slipway::track {

class TensorBoardWriter;

// The targets the engine writes itself. "all" is every one of them; "none" (or an empty list) is none.
struct ReportTargets {
    bool tensorboard = false;
};
ReportTargets report_targets(const std::vector<std::string>& report_to);
// A run's name as one folder name: '/' becomes '_', and an empty name is "run".
std::string run_folder_name(std::string name);
// The run's TensorBoard folder: /training/logging_dir, else <output_dir>/runs/<name> (HF's layout).
std::string tensorboard_dir(const RunConfig& config);
// The run config as hyperparameters: "section.key" -> number, string or bool; lists and maps as JSON text.
HParams config_hparams(const RunConfig& config);

class RunTrackers {
public:
    using Warn = std::function<void(const std::string& message)>;

    // `fresh`: the run starts from step 0 (no resume). Its default TensorBoard folder then drops the event
    // files an earlier run of the same output_dir left, as mllog.txt is started again; a resumed run adds a
    // file beside them, and a logging_dir the config names is never cleared.
    RunTrackers(const RunConfig& config, Warn warn, bool fresh, FileSystem& fs = default_file_system());
    ~RunTrackers();
    RunTrackers(const RunTrackers&) = delete;
    RunTrackers& operator=(const RunTrackers&) = delete;

    // One MLLOG event of the run, in order. run_stop ends the session (its status) and closes the files.
    void on_event(const MllogEvent& event);
    // Where each target writes, for the run's log ("tensorboard: <folder>").
    std::vector<std::string> destinations() const;

private:
    void remove_earlier_event_files();
    void start_tensorboard(double wall_time);
    void tensorboard_failed(const Status& status, const std::string& lost);

    RunConfig config_;
    Warn warn_;
    FileSystem& fs_;
    MetricNamer namer_;
    bool wants_tensorboard_ = false;
    bool tensorboard_started_ = false;
    std::unique_ptr<TensorBoardWriter> tensorboard_;
};

}  // namespace slipway::track
