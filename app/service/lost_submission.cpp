// What the row says of a submission whose answer was lost (lost_submission.h).
#include "service/lost_submission.h"

namespace slipway::app {

LostSubmission lost_submission(const Result<StoredRun>& row) {
    LostSubmission fate;
    if (row.ok()) fate.row = row->id;
    if (row.ok() && !row->job_id.empty()) {
        fate.state = RunState::kPending;  // the worker's word already
        fate.job_id = row->job_id;
        fate.log_path = row->log_path;
        fate.cancellable = true;
        return fate;
    }
    if (row.ok() && is_terminal(row->state)) {  // the worker wrote why the submission failed
        fate.state = row->state;
        fate.detail = row->state_detail;
        return fate;
    }
    fate.detail = kProfileChangedDuringSubmitDetail;
    fate.write_to_row = row.ok();
    return fate;
}

}  // namespace slipway::app
