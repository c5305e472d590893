// The startup sweep: rows left in a live state that nothing will end any more, because the process that ran
// or followed them is gone. A run on This computer whose engine is gone died with the session that ran it
// (interrupted); one another process still runs (`slipway run`, another window) is left to it. A log file no
// longer read, or a cluster log no longer followed, has not said how it ended (incomplete). A cluster
// submission that never got a job an hour after it began died during its upload (incomplete); younger ones
// may still be uploading. A cluster job is left alone: Slurm says how it goes. Qt-free; the app runs it when
// it starts.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "service/run_store.h"

namespace slipway::app {

struct StaleRunsOptions {
    int64_t upload_limit_ms = 3'600'000;  // a submission with no job this long after it began is dead
    // Whether a local row's engine still runs (another process's run): check_local_engine by default.
    std::function<bool(const StoredRun& row)> engine_alive;
};

// Ends the stale ones of `rows` in `store` as ends nobody saw (RunStore::end_unseen: no finished time, an
// end stored meanwhile stands); returns how many it ended. A row it cannot write stays as it is. `now_ms`:
// milliseconds since the epoch, as rows keep their times.
int end_stale_runs(const std::vector<StoredRun>& rows, RunStore& store, int64_t now_ms,
                   const StaleRunsOptions& options = {});

}  // namespace slipway::app
