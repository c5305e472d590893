// One target of /training/report_to as the run feeds it: its start (the run config), each metric point,
// and its end. RunTrackers calls them in that order on rank 0 and drops a target whose call fails.
#pragma once

#include <string>

#include "contract/status.h"
#include "track/metric_points.h"

namespace slipway::track {

class Tracker {
public:
    virtual ~Tracker() = default;

    // "tensorboard", as report_to names it; begins the target's warnings.
    virtual std::string name() const = 0;
    // Where the points go, for the run's log ("<folder>").
    virtual std::string where() const = 0;
    // What a reader misses when this target fails: "TensorBoard", "the MLflow run".
    virtual std::string lacking() const = 0;

    // The run starts (or resumes) at `wall_time`, seconds since the Unix epoch.
    [[nodiscard]] virtual Status start(double wall_time) = 0;
    [[nodiscard]] virtual Status point(const MetricPoint& point) = 0;
    // run_stop: `succeeded` is its status.
    [[nodiscard]] virtual Status finish(bool succeeded, double wall_time) = 0;
};

}  // namespace slipway::track
