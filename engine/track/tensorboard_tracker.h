// report_to tensorboard: the run's event file in its log folder, with the run config as text and as an
// HParams session.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "contract/file_system.h"
#include "contract/run_config.h"
#include "track/tracker.h"

namespace slipway::track {

class TensorBoardWriter;

class TensorBoardTracker final : public Tracker {
public:
    // `fresh`: see RunTrackers. `warn` hears of an earlier event file that could not be removed.
    TensorBoardTracker(const RunConfig& config, bool fresh,
                       const std::function<void(const std::string&)>& warn, FileSystem& fs);
    ~TensorBoardTracker() override;

    std::string name() const override { return "tensorboard"; }
    std::string where() const override;
    std::string lacking() const override { return "TensorBoard"; }

    [[nodiscard]] Status start(double wall_time) override;
    [[nodiscard]] Status point(const MetricPoint& point) override;
    [[nodiscard]] Status finish(bool succeeded, double wall_time) override;

private:
    void remove_earlier_event_files(const std::function<void(const std::string&)>& warn);

    const RunConfig& config_;
    FileSystem& fs_;
    std::unique_ptr<TensorBoardWriter> writer_;
};

}  // namespace slipway::track
