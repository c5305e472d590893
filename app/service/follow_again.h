// How a stored run is followed again (the monitor's Resume, a restart of the app): the run service's rule,
// one answer per row. An engine the caller runs itself is its own run again (cancellable unless a cancel is
// under way). A Slurm job is followed on the login node from its stored offset and Slurm is asked again; an
// ended one's log is read to its end once, and its row keeps Slurm's last word. A log on a cluster opened by
// hand reads on where it stopped. Any other log is a local file followed from its offset: an engine an
// earlier session started is no longer anyone's to stop, except one another process still runs here, whose
// row says its state (and whose engine can be asked to stop through its row). Qt-free: the app's tracker does
// what the plan says.
#pragma once

#include "contract/status.h"
#include "service/run_store.h"

namespace slipway::app {

class LocalJob;

struct FollowAgain {
    RunKind followed_as = RunKind::kLogFile;  // kLocal only for the caller's own engine
    bool live = true;                         // followed as it is written; false: read to its end once
    bool cancellable = false;
    bool state_from_store = false;  // another process runs it here: its row says its state
    bool ask_slurm = false;         // a live job: Slurm is asked for its state at once
};

// `own_engine`: the caller's engine for this row, if it runs one. Fails, naming the run, when the row has
// no log to follow.
[[nodiscard]] Result<FollowAgain> plan_follow_again(const StoredRun& row, const LocalJob* own_engine);

}  // namespace slipway::app
