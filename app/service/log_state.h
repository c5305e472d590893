// What a followed run's log itself says of the run's state, judged after each batch of its lines: a stalled
// run that logs new steps runs again; a Slurm job the last poll called pending whose log has new steps runs
// (whatever Slurm said a poll ago); a log file or a cluster log that nobody else reports on ends as its
// run_stop says; a Slurm job whose engine logged run_stop is worth asking Slurm about now rather than at the
// next poll; a log file read once ends, at its end, as its run_stop says (incomplete without one). Everything
// else about a run's state is someone else's to say: the engine's exit (a local run), Slurm (a job), another
// process's row. Qt-free: the app's tracker applies the verdict.
#pragma once

#include <optional>
#include <string>

#include "core/run_state.h"
#include "service/run_store.h"

namespace slipway::app {

struct LogReading {
    RunKind followed_as = RunKind::kLogFile;  // how the run is followed (an engine it does not run: kLogFile)
    RunState state = RunState::kUnknown;      // the run's state before the batch
    bool live = false;                        // followed as it is written, not a file read once
    bool state_from_store = false;            // another process's run: its row says its state
    bool new_steps = false;                   // the batch moved the last step on
    bool stopped_before = false;              // the log had its run_stop before the batch
    bool stopped = false;                     // ... after it
    std::string stop_status;                  // run_stop's metadata.status
    bool read_to_end = false;                 // a file read once: the batch reached its end
};

struct LogVerdict {
    std::optional<RunState> state;  // the run's new state, when the log changes it
    std::string detail;             // with it: what run_stop's status adds
    bool ended_by_log = false;      // the log's run_stop (or its end) ended it: store the log's times too
    bool ask_slurm_now = false;     // a job that logged run_stop: Slurm's word on it is due
};

LogVerdict read_log_state(const LogReading& reading);

}  // namespace slipway::app
