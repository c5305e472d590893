// When another process's local run is left without its owner (orphaned_run.h).
#include "service/orphaned_run.h"

#include "service/local_executor.h"

namespace slipway::app {

std::optional<OrphanEnd> OrphanedRunCheck::check(const StoredRun& row,
                                                 const std::optional<std::string>& log_stop) {
    if (!is_live(row.state) || check_local_engine(row).ok()) {
        checks_ = 0;
        return std::nullopt;
    }
    if (++checks_ != 2) return std::nullopt;
    if (log_stop) return OrphanEnd{from_run_stop_status(*log_stop), run_stop_detail(*log_stop)};
    return OrphanEnd{RunState::kInterrupted, kOwnerEndedUnsaidDetail};
}

}  // namespace slipway::app
