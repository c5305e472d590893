// What became of a cluster submission whose answer was lost: its cluster session went away (the profile was
// edited) while sbatch ran. The session's worker finished the submission first and recorded its outcome in
// the run's row, so the row says it: a job id there means the job was queued (pending, with its log); a row
// that ended says why the submission failed; no row, or a live row without a job, means nobody knows, and
// the row is told so. Qt-free: the app's tracker applies the answer to the run it was submitting.
#pragma once

#include <cstdint>
#include <string>

#include "contract/status.h"
#include "core/run_state.h"
#include "service/run_store.h"

namespace slipway::app {

struct LostSubmission {
    RunState state = RunState::kUnknown;
    std::string detail;
    std::string job_id;    // sbatch's job, when it got one
    std::string log_path;  // its log on the login node
    bool cancellable = false;
    int64_t row = 0;            // the run's row; 0 when there is none
    bool write_to_row = false;  // the row does not say this yet (its fate is unknown): store it
};

// `row`: the store's row for the submission's run id (an error when there is none).
LostSubmission lost_submission(const Result<StoredRun>& row);

}  // namespace slipway::app
