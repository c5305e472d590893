// Decides when a run deserves a desktop notification: it finished, failed, reached its eval target, or
// stalled (no new step for N times the median interval between the steps seen so far). Pure logic with
// the clock passed in, so the rules are unit-tested; the monitor turns alerts into tray messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/mllog.h"
#include "core/run_metrics.h"

namespace slipway::app {

enum class RunAlertKind { kFinished, kFailed, kTargetReached, kStalled };

struct RunAlert {
    RunAlertKind kind;
    std::string message;  // "finished (status success)", "stalled: no new step for 12 min", ...
};

class RunWatch {
public:
    // A run stalls after stall_factor x the median step interval, but never sooner than min_stall_ms.
    explicit RunWatch(double stall_factor = 5.0, int64_t min_stall_ms = 60'000);

    // Call after `metrics` has folded `event` in. `now_ms` is the local clock (step intervals are
    // measured on it, so a remote clock offset does not matter).
    std::vector<RunAlert> on_event(const MllogEvent& event, const RunMetrics& metrics, int64_t now_ms);
    // The engine process (or Slurm job) ended with `exit_code` and no run_stop was seen: a failure.
    std::optional<RunAlert> on_exit(int exit_code);
    // Polled by a timer: a stall alert once per stall (re-armed when steps resume).
    std::optional<RunAlert> check_stall(int64_t now_ms);

    std::optional<int64_t> median_step_interval_ms() const;
    bool ended() const { return ended_; }
    // The run's end was announced elsewhere (Slurm's word, the process's exit) or asked for (a cancel): no
    // alert from the log any more, so a run ends with one alert at most.
    void mark_ended() { ended_ = true; }

private:
    double stall_factor_;
    int64_t min_stall_ms_;
    std::optional<double> last_step_;
    std::optional<int64_t> last_step_at_ms_;
    std::vector<int64_t> intervals_ms_;
    bool stall_reported_ = false;
    bool target_reported_ = false;
    bool ended_ = false;
};

}  // namespace slipway::app
