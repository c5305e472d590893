// The RunRecordSink of the app and the CLI: submit_run records the new job (run id, job id, remote folder)
// in the run history the moment sbatch answers, on the caller's own connection.
#pragma once

#include "history/run_history.h"
#include "remote/deploy/run_record.h"

namespace slipway::app {

class HistoryRunSink : public remote::RunRecordSink {
public:
    explicit HistoryRunSink(RunHistory& store) : store_(store) {}
    [[nodiscard]] Status save(const remote::RunRecord& record) const override {
        return store_.record_submission(record).status();
    }

private:
    RunHistory& store_;
};

}  // namespace slipway::app
