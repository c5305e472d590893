// The startup sweep over a real run store (service/stale_runs.h): which live rows nothing will end any more,
// and what each is ended as; rows another process still runs, cluster jobs (Slurm's to say) and young
// submissions are left alone; a refused write leaves its row as it was. And what kind of run a row is.
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include <algorithm>
#include "history/history_run_store.h"
#include "history/run_history.h"

#include "real_store_test.h"
#include "service/stale_runs.h"

namespace slipway::app {
namespace {

class StaleRuns : public RealStoreTest {
protected:
    int64_t add(const std::string& name, const std::string& cluster, RunState state, int64_t created_ms,
                const std::string& run_id = {}, const std::string& job_id = {}) {
        StoredRun row;
        row.name = name;
        row.cluster = cluster;
        row.state = state;
        row.created_ms = created_ms;
        row.run_id = run_id;
        row.job_id = job_id;
        const Result<int64_t> id = real_->add(row);
        EXPECT_TRUE(id.ok()) << id.error();
        return id.ok() ? *id : 0;
    }
    std::vector<StoredRun> rows() const {
        const Result<std::vector<StoredRun>> all = history_->runs();
        EXPECT_TRUE(all.ok());
        return all.ok() ? *all : std::vector<StoredRun>{};
    }
    StoredRun row(int64_t id) const { return *history_->run(id); }
};

TEST_F(StaleRuns, EndsWhatNothingWillEndAndLeavesTheRest) {
    const int64_t now = now_ms();
    const int64_t dead_engine = add("dead", kLocalCluster, RunState::kRunning, now - 60 * 1000, "", "4242");
    const int64_t other_process = add("cli", kLocalCluster, RunState::kRunning, now - 60 * 1000, "", "4343");
    const int64_t opened_log = add("opened", kOpenedLogCluster, RunState::kReading, now - 60 * 1000);
    const int64_t cluster_log = add("slurm-7.out @ hpc", "hpc", RunState::kFollowing, now - 60 * 1000);
    const int64_t lost_upload =
        add("lost", "hpc", RunState::kSubmitting, now - 2 * 3600 * 1000, "lost-20261128-010000-abcd");
    const int64_t young_upload =
        add("young", "hpc", RunState::kSubmitting, now - 600 * 1000, "young-20261128-055000-abcd");
    const int64_t job =
        add("job", "hpc", RunState::kRunning, now - 60 * 1000, "job-20261128-055000-abcd", "117");
    const int64_t ended = add("ended", kLocalCluster, RunState::kCompleted, now - 60 * 1000, "", "4444");

    StaleRunsOptions options;
    std::vector<std::string> asked;
    options.engine_alive = [&](const StoredRun& r) {
        asked.push_back(r.name);
        return r.job_id == "4343";
    };
    EXPECT_EQ(end_stale_runs(rows(), *store_, now, options), 4);
    EXPECT_EQ(asked.size(), 2u);  // only the live local rows' engines are looked for
    EXPECT_EQ(row(dead_engine).state, RunState::kInterrupted);
    EXPECT_EQ(row(other_process).state, RunState::kRunning);
    EXPECT_EQ(row(opened_log).state, RunState::kIncomplete);
    EXPECT_EQ(row(cluster_log).state, RunState::kIncomplete);
    EXPECT_EQ(row(lost_upload).state, RunState::kIncomplete);
    EXPECT_EQ(row(lost_upload).state_detail, "submission interrupted");
    EXPECT_EQ(row(young_upload).state, RunState::kSubmitting);
    EXPECT_EQ(row(job).state, RunState::kRunning);
    EXPECT_EQ(row(ended).state, RunState::kCompleted);
    // One write a row it ended, none for the others; and no finished time: nobody saw when they ended.
    std::vector<std::string> writes = store_->writes;
    std::sort(writes.begin(), writes.end());
    EXPECT_EQ(writes, (std::vector<std::string>{"end_unseen incomplete", "end_unseen incomplete",
                                                "end_unseen incomplete", "end_unseen interrupted"}));
    EXPECT_EQ(history_->run(dead_engine)->finished_ms, 0);
    EXPECT_EQ(history_->run(cluster_log)->finished_ms, 0);

    // A second sweep finds nothing more to end.
    store_->writes.clear();
    EXPECT_EQ(end_stale_runs(rows(), *store_, now, options), 0);
    EXPECT_TRUE(store_->writes.empty());
}

TEST_F(StaleRuns, ARefusedWriteLeavesItsRowAsItWas) {
    const int64_t now = now_ms();
    const int64_t opened_log = add("opened", kOpenedLogCluster, RunState::kReading, now - 60 * 1000);
    store_->refuse = "end_unseen";
    EXPECT_EQ(end_stale_runs(rows(), *store_, now), 0);
    EXPECT_EQ(row(opened_log).state, RunState::kReading);
}

TEST(StoredRunKind, TheRowSaysWhatKindOfRunItIs) {
    StoredRun r;
    r.cluster = kLocalCluster;
    EXPECT_EQ(r.kind(), RunKind::kLocal);
    r.cluster = kOpenedLogCluster;
    EXPECT_EQ(r.kind(), RunKind::kLogFile);
    r.cluster.clear();  // rows older than the cluster column
    EXPECT_EQ(r.kind(), RunKind::kLogFile);
    r.cluster = "hpc";
    EXPECT_EQ(r.kind(), RunKind::kClusterLog);  // neither run id nor job: a log opened by hand
    r.run_id = "demo-20261128-010000-abcd";
    EXPECT_EQ(r.kind(), RunKind::kClusterJob);  // a submission still uploading
    r.run_id.clear();
    r.job_id = "117";
    EXPECT_EQ(r.kind(), RunKind::kClusterJob);  // a job from before run ids
}

}  // namespace
}  // namespace slipway::app
