// RunWatch: finish / failure / target / stall rules.
#include "core/run_watch.h"
#include "contract/mllog_keys.h"
#include "core/run_state.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace slipway::app {
namespace {

// "%.4g": a target and a score as people read them.
std::string shortest(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", value);
    return text;
}

}  // namespace

RunWatch::RunWatch(double stall_factor, int64_t min_stall_ms)
    : stall_factor_(stall_factor), min_stall_ms_(min_stall_ms) {}

std::vector<RunAlert> RunWatch::on_event(const MllogEvent& event, const RunMetrics& metrics, int64_t now_ms) {
    std::vector<RunAlert> alerts;
    if (event.key == mllog_key::kResume)
        ended_ = false;  // a restarted job goes on after its stopped segment's run_stop
    if (ended_) return alerts;
    if (event.key == mllog_key::kRunStop) {
        ended_ = true;
        const std::string status = metrics.status.value_or("unknown");
        if (status == run_stop_status::kSuccess) {
            alerts.push_back({RunAlertKind::kFinished, kFinishedAlert});
        } else {
            alerts.push_back({RunAlertKind::kFailed, fill_text(kStoppedWithStatusAlert, {status})});
        }
        return alerts;
    }
    if (const std::optional<double> step = event.step_num(); step && (!last_step_ || *step > *last_step_)) {
        if (last_step_at_ms_) intervals_ms_.push_back(now_ms - *last_step_at_ms_);
        last_step_ = step;
        last_step_at_ms_ = now_ms;
        stall_reported_ = false;
    } else if (!last_step_ && event.samples_count() && metric_for_key(event.key)) {
        // Logs without step_num (MLPerf submissions): samples_count advances instead.
        last_step_at_ms_ = now_ms;
        stall_reported_ = false;
    }
    if (event.key == mllog_key::kEvalAccuracy && event.value.is_number() && !target_reported_ &&
        metrics.meets_target(event.value.get<double>())) {
        target_reported_ = true;
        alerts.push_back({RunAlertKind::kTargetReached,
                          fill_text(kTargetReachedAlert,
                                    {shortest(event.value.get<double>()), shortest(*metrics.target)})});
    }
    return alerts;
}

std::optional<RunAlert> RunWatch::on_exit(int exit_code) {
    if (ended_) return std::nullopt;
    ended_ = true;
    if (exit_code == 0) return RunAlert{RunAlertKind::kFinished, kExitedCleanAlert};
    return RunAlert{RunAlertKind::kFailed, fill_text(kExitedWithCodeAlert, {std::to_string(exit_code)})};
}

std::optional<int64_t> RunWatch::median_step_interval_ms() const {
    if (intervals_ms_.empty()) return std::nullopt;
    std::vector<int64_t> sorted = intervals_ms_;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    return sorted[sorted.size() / 2];
}

std::optional<RunAlert> RunWatch::check_stall(int64_t now_ms) {
    if (ended_ || stall_reported_ || !last_step_at_ms_) return std::nullopt;
    const std::optional<int64_t> median = median_step_interval_ms();
    if (!median) return std::nullopt;
    const int64_t limit = std::max(
        min_stall_ms_, static_cast<int64_t>(std::llround(stall_factor_ * static_cast<double>(*median))));
    const int64_t quiet = now_ms - *last_step_at_ms_;
    if (quiet < limit) return std::nullopt;
    stall_reported_ = true;
    return RunAlert{RunAlertKind::kStalled,
                    fill_text(kStalledAlert, {std::to_string(quiet / 1000), std::to_string(*median)})};
}

}  // namespace slipway::app
