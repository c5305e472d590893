// The RunRecordSink of the app and the CLI: submit_run records the new job (run id, job id, remote folder)
// in the run history the moment sbatch answers, on the caller's own connection. Best effort: once sbatch
// has the job, a history that cannot be written (a full disk, a lock held too long) must not turn the
// submission into a failure: the job runs either way. The problem is kept for the caller to report and to
// record the job another way.
#pragma once

#include <string>

#include "history/run_history.h"
#include "remote/deploy/run_record.h"

namespace slipway::app {

class HistoryRunSink : public remote::RunRecordSink {
public:
    explicit HistoryRunSink(RunHistory& store) : store_(store) {}
    [[nodiscard]] Status save(const remote::RunRecord& record) const override {
        if (const Result<int64_t> row = store_.record_submission(record); !row.ok()) problem_ = row.error();
        return Status::Ok();
    }
    // Why the last save could not write the history; empty when it did.
    const std::string& problem() const { return problem_; }

private:
    RunHistory& store_;
    mutable std::string problem_;
};

}  // namespace slipway::app
