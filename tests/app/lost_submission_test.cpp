// What the row says of a cluster submission whose answer was lost (service/lost_submission.h): queued,
// failed as the row says, or unknown (and the row is told so). The tracker's side, a profile edited while
// sbatch runs, is run_tracker_cluster_test.cpp's.
#include <gtest/gtest.h>

#include "service/lost_submission.h"

namespace slipway::app {
namespace {

StoredRun submitted_row(RunState state) {
    StoredRun r;
    r.id = 3;
    r.run_id = "demo-20261128-1";
    r.cluster = "hpc";
    r.state = state;
    return r;
}

TEST(LostSubmission, AJobInTheRowWasQueued) {
    StoredRun row = submitted_row(RunState::kPending);
    row.job_id = "12";
    row.log_path = "/home/u/slipway/runs/demo/mllog.txt";
    const LostSubmission fate = lost_submission(row);
    EXPECT_EQ(fate.state, RunState::kPending);
    EXPECT_EQ(fate.job_id, "12");
    EXPECT_EQ(fate.log_path, row.log_path);
    EXPECT_TRUE(fate.cancellable);
    EXPECT_EQ(fate.row, 3);
    EXPECT_FALSE(fate.write_to_row);  // the worker's word already
}

TEST(LostSubmission, AnEndedRowWithoutAJobSaysWhyItFailed) {
    StoredRun row = submitted_row(RunState::kFailed);
    row.state_detail = "submit: sbatch: error: invalid partition specified: gpux";
    const LostSubmission fate = lost_submission(row);
    EXPECT_EQ(fate.state, RunState::kFailed);
    EXPECT_EQ(fate.detail, row.state_detail);
    EXPECT_FALSE(fate.cancellable);
    EXPECT_EQ(fate.row, 3);
    EXPECT_FALSE(fate.write_to_row);
}

TEST(LostSubmission, ALiveRowWithoutAJobOrNoRowIsUnknown) {
    const LostSubmission live = lost_submission(submitted_row(RunState::kSubmitting));
    EXPECT_EQ(live.state, RunState::kUnknown);
    EXPECT_EQ(live.detail, kProfileChangedDuringSubmitDetail);
    EXPECT_EQ(live.row, 3);
    EXPECT_TRUE(live.write_to_row);  // the row is told its fate is unknown

    const LostSubmission none =
        lost_submission(Result<StoredRun>(Status::Error(StatusCode::kNotFound, "no run demo-20261128-1")));
    EXPECT_EQ(none.state, RunState::kUnknown);
    EXPECT_EQ(none.row, 0);
    EXPECT_FALSE(none.write_to_row);
    EXPECT_FALSE(none.cancellable);
}

}  // namespace
}  // namespace slipway::app
