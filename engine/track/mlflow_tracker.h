// report_to mlflow: an MLflow file store run in <output_dir>/mlruns (MLflow's default store, beside the
// run's other outputs), with every run config field as a param, the config itself as an artifact, and the
// run's status at its end. A resumed run goes on in the MLflow run it started.
#pragma once

#include <memory>

#include "contract/file_system.h"
#include "contract/run_config.h"
#include "track/tracker.h"

namespace slipway::track {

class MlflowRun;

// <output_dir>/mlruns.
std::string mlflow_store_dir(const RunConfig& config);

class MlflowTracker final : public Tracker {
public:
    MlflowTracker(const RunConfig& config, bool fresh, FileSystem& fs);
    ~MlflowTracker() override;

    std::string name() const override { return "mlflow"; }
    std::string where() const override { return mlflow_store_dir(config_); }
    std::string lacking() const override { return "the MLflow run"; }

    [[nodiscard]] Status start(double wall_time) override;
    [[nodiscard]] Status point(const MetricPoint& point) override;
    [[nodiscard]] Status finish(bool succeeded, double wall_time) override;

private:
    [[nodiscard]] Status log_config();

    const RunConfig& config_;
    bool fresh_ = true;
    FileSystem& fs_;
    std::unique_ptr<MlflowRun> run_;
};

}  // namespace slipway::track
