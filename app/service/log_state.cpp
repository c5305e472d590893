// The log's say on a run's state (log_state.h).
#include "service/log_state.h"

namespace slipway::app {

LogVerdict read_log_state(const LogReading& r) {
    LogVerdict verdict;
    const bool stop_now = r.stopped && !r.stopped_before;
    const bool log_only = r.followed_as == RunKind::kLogFile || r.followed_as == RunKind::kClusterLog;
    if (r.state == RunState::kStalled && r.new_steps) verdict.state = RunState::kRunning;
    if ((r.state == RunState::kPending || r.state == RunState::kSubmitting) &&
        r.followed_as == RunKind::kClusterJob && r.new_steps && !r.stopped)
        verdict.state = RunState::kRunning;
    auto end_by_run_stop = [&] {
        verdict.state = r.stopped ? from_run_stop_status(r.stop_status) : RunState::kIncomplete;
        verdict.detail = run_stop_detail(r.stop_status);
        verdict.ended_by_log = true;
    };
    if (stop_now && log_only && r.live && !r.state_from_store) end_by_run_stop();
    if (stop_now && r.followed_as == RunKind::kClusterJob && !is_terminal(r.state))
        verdict.ask_slurm_now = true;
    if (r.read_to_end && r.followed_as == RunKind::kLogFile && !r.live && r.state == RunState::kReading)
        end_by_run_stop();
    return verdict;
}

}  // namespace slipway::app
