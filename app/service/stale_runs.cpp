// The startup sweep (stale_runs.h).
#include "service/stale_runs.h"

#include "service/local_executor.h"

namespace slipway::app {

int end_stale_runs(const std::vector<StoredRun>& rows, RunStore& store, int64_t now_ms,
                   const StaleRunsOptions& options) {
    int ended = 0;
    auto end = [&](const StoredRun& row, RunState state, const std::string& detail) {
        if (store.end_unseen(row.id, state, detail).ok()) ++ended;
    };
    for (const StoredRun& row : rows) {
        if (!is_live(row.state)) continue;
        switch (row.kind()) {
            case RunKind::kLocal: {
                const bool alive =
                    options.engine_alive ? options.engine_alive(row) : check_local_engine(row).ok();
                if (!alive) end(row, RunState::kInterrupted, {});
                break;
            }
            case RunKind::kLogFile:
                end(row, RunState::kIncomplete, {});  // a log no longer read or followed
                break;
            case RunKind::kClusterLog:
            case RunKind::kClusterJob:
                if (row.state == RunState::kFollowing) {
                    end(row, RunState::kIncomplete, {});
                } else if (row.state == RunState::kSubmitting && row.job_id.empty() && row.created_ms > 0 &&
                           row.created_ms < now_ms - options.upload_limit_ms) {
                    end(row, RunState::kIncomplete, kSubmissionInterruptedDetail);
                }
                break;
        }
    }
    return ended;
}

}  // namespace slipway::app
