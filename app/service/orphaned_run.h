// A run on This computer that another process runs (`slipway run`, another window) and whose row is still
// live while its engine is gone: that process died without storing the end. Its owner stores an end within
// one poll (200 ms), so the row is believed until two checks in a row have found it so; then the run's end
// is the log's to say: its run_stop, else interrupted. Qt-free: the app's tracker asks at each stall check
// and takes the run over with the end it is given.
#pragma once

#include <optional>
#include <string>

#include "core/run_state.h"
#include "service/run_store.h"

namespace slipway::app {

struct OrphanEnd {
    RunState state = RunState::kInterrupted;
    std::string detail;
};

class OrphanedRunCheck {
public:
    // `row` as stored now; `log_stop`: the status of the log's run_stop, if it has logged one. The end to
    // take the run over with, once; nothing while the row or its engine says the run goes on.
    std::optional<OrphanEnd> check(const StoredRun& row, const std::optional<std::string>& log_stop);

private:
    int checks_ = 0;  // checks in a row that found the engine gone and the row live
};

}  // namespace slipway::app
