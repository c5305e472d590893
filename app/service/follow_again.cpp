// How a stored run is followed again (follow_again.h).
#include "service/follow_again.h"

#include "service/local_executor.h"

namespace slipway::app {

Result<FollowAgain> plan_follow_again(const StoredRun& row, const LocalJob* own_engine) {
    if (row.log_path.empty())
        return Result<FollowAgain>::Error("run " + std::to_string(row.id) + " has no log to follow");
    FollowAgain plan;
    if (own_engine != nullptr) {
        plan.followed_as = RunKind::kLocal;
        plan.cancellable = !own_engine->cancel_asked();
        return plan;
    }
    switch (row.kind()) {
        case RunKind::kClusterLog:
            plan.followed_as = RunKind::kClusterLog;
            return plan;
        case RunKind::kClusterJob:
            plan.followed_as = RunKind::kClusterJob;
            plan.live = !is_terminal(row.state);
            plan.cancellable = is_live(row.state);
            plan.ask_slurm = plan.live;  // an ended job's row keeps Slurm's last word
            return plan;
        case RunKind::kLocal:
        case RunKind::kLogFile:
            // The startup sweep ended this app's own stale rows: a local row still live is another process's.
            plan.followed_as = RunKind::kLogFile;
            plan.state_from_store = row.kind() == RunKind::kLocal && is_live(row.state);
            plan.cancellable = plan.state_from_store;
            return plan;
    }
    return plan;
}

}  // namespace slipway::app
