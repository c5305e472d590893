// The run service (service/slurm_executor.h) on its own, as the CLI and the app's cluster worker call it:
// over a FakeCluster (tests/app/fake_cluster.h: FakeSession playing Slurm) and the real run history
// (HistoryRunStore over a temporary SQLite file), with a store in between that records every write and can
// refuse one kind (a full disk). What it must do: write a submission's row once per state change, record a
// refused submission with its reason, keep a job Slurm has even when the store cannot say so, ask every job
// of a cluster with one squeue, and follow, cancel and fetch a stored run's job, storing what Slurm says.
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include <filesystem>
#include <fstream>

#include "fake_cluster.h"
#include "history/history_run_store.h"
#include "history/run_history.h"
#include "real_store_test.h"
#include "remote/slurm/sbatch_script.h"
#include "service/job_watch.h"
#include "service/slurm_executor.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

class RunService : public RealStoreTest {
protected:
    void SetUp() override {
        RealStoreTest::SetUp();
        if (HasFatalFailure()) return;
        Result<std::unique_ptr<remote::Session>> session = cluster_.connector()(profile(), {});
        ASSERT_TRUE(session.ok());
        session_ = std::move(*session);
        executor_ = std::make_unique<SlurmExecutor>(*session_, profile(), *store_);
    }

    static remote::ClusterProfile profile() {
        remote::ClusterProfile p;
        p.name = "hpc";
        p.host = "login.example.org";
        p.user = "researcher";
        return p;
    }
    static SubmitRequest demo() {
        SubmitRequest request;
        request.config = testing_util::demo_config();
        request.input_root = test_paths::source_dir();
        request.engine_binary = testing_util::fake_engine().toStdString();
        return request;
    }
    size_t commands_starting(const std::string& prefix) const {
        size_t n = 0;
        for (const std::string& c : cluster_.commands())
            n += c.rfind(prefix, 0) == 0 ? 1 : 0;
        return n;
    }

    testing_util::FakeCluster cluster_;
    std::unique_ptr<remote::Session> session_;
    std::unique_ptr<SlurmExecutor> executor_;
};

TEST_F(RunService, ASubmissionWritesItsRowOncePerStateChange) {
    const Result<Submission> sent = executor_->submit(demo());
    ASSERT_TRUE(sent.ok()) << sent.error();
    // Submitting before anything is uploaded; pending with its job, config and folder in one write.
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"add submitting", "record_job 100"}));
    EXPECT_EQ(sent->store_problem, "");
    const Result<StoredRun> row = real_->find(sent->run.run_id);
    ASSERT_TRUE(row.ok()) << row.error();
    EXPECT_EQ(row->id, sent->run.id);
    EXPECT_EQ(row->state, RunState::kPending);
    EXPECT_EQ(row->job_id, "100");
    EXPECT_EQ(row->cluster, "hpc");
    EXPECT_EQ(row->remote_dir, "/home/researcher/slipway/runs/" + row->run_id);
    EXPECT_EQ(row->log_path, row->remote_dir + "/slurm-100.out");
    // The config as it runs there: its inputs point into the run folder.
    EXPECT_EQ(row->config_json, to_json(sent->deployment.remote_config).dump(2));
    EXPECT_NE(row->config_json.find(row->remote_dir + "/inputs/"), std::string::npos) << row->config_json;
    EXPECT_EQ(sent->run.log_path, row->log_path);
    EXPECT_EQ(cluster_.job_state("100"), "PENDING");
}

TEST_F(RunService, ARefusedSubmissionIsStoredFailedWithSlurmsReason) {
    cluster_.refuse_submissions("Requested node configuration is not available");
    const Result<Submission> sent = executor_->submit(demo());
    ASSERT_FALSE(sent.ok());
    EXPECT_NE(sent.error().find("Requested node configuration is not available"), std::string::npos);
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"add submitting", "set_state failed"}));
    const Result<std::vector<StoredRun>> runs = real_->cluster_runs();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ(runs->front().state, RunState::kFailed);
    EXPECT_EQ(runs->front().state_detail.rfind("submit: pre-flight", 0), 0u) << runs->front().state_detail;
    EXPECT_EQ(runs->front().job_id, "");
    EXPECT_EQ(commands_starting("sbatch --parsable"), 0u);  // nothing was queued
}

TEST_F(RunService, AJobSlurmHasIsKeptWhenTheStoreCannotRecordIt) {
    store_->refuse = "record_job";
    const Result<Submission> sent = executor_->submit(demo());
    ASSERT_TRUE(sent.ok()) << sent.error();  // the job runs either way
    EXPECT_EQ(sent->run.job_id, "100");
    EXPECT_EQ(sent->store_problem, "database or disk is full");
}

TEST_F(RunService, AJobTheStoreMissedOnceIsRecordedAtTheSecondTry) {
    store_->refuse = "record_job";
    store_->refuse_once = true;  // a lock held a moment too long
    const Result<Submission> sent = executor_->submit(demo());
    ASSERT_TRUE(sent.ok()) << sent.error();
    EXPECT_EQ(sent->store_problem, "");
    EXPECT_EQ(store_->writes,
              (std::vector<std::string>{"add submitting", "record_job 100", "record_job 100"}));
    const Result<StoredRun> row = real_->find(sent->run.run_id);
    EXPECT_EQ(row->state, RunState::kPending);
    EXPECT_EQ(row->job_id, "100");
}

TEST_F(RunService, ARowTheStoreCouldNotAddIsMadeWhenSbatchAnswers) {
    store_->refuse = "add";
    store_->refuse_once = true;
    const Result<Submission> sent = executor_->submit(demo());
    ASSERT_TRUE(sent.ok()) << sent.error();  // the job goes out all the same
    EXPECT_EQ(sent->store_problem, "database or disk is full");
    EXPECT_NE(sent->run.id, 0);
    const Result<StoredRun> row = real_->find(sent->run.run_id);
    ASSERT_TRUE(row.ok()) << row.error();
    EXPECT_EQ(row->id, sent->run.id);
    EXPECT_EQ(row->job_id, "100");
    EXPECT_EQ(row->state, RunState::kPending);
}

TEST_F(RunService, TheWatcherAsksEveryJobOfTheClusterWithOneSqueue) {
    for (int i = 0; i < 3; ++i)
        ASSERT_TRUE(executor_->submit(demo()).ok());
    cluster_.set_job("100", "RUNNING");
    cluster_.set_job_nodes("100", "node[1-2]");
    cluster_.set_node_state("node1", "allocated");
    cluster_.set_node_state("node2", "down*");
    cluster_.set_job("102", "COMPLETED");
    const size_t squeues = commands_starting("squeue");
    const size_t writes = store_->writes.size();
    const std::vector<JobAnswer> answers = executor_->ask({"100", "101", "102"}, /*node_states=*/true);
    EXPECT_EQ(commands_starting("squeue"), squeues + 1);
    ASSERT_EQ(answers.size(), 3u);
    EXPECT_EQ(answers[0].job_id, "100");
    ASSERT_TRUE(answers[0].info.ok());
    EXPECT_EQ(answers[0].info->state, "RUNNING");
    EXPECT_EQ(answers[0].nodes, (std::vector<remote::NodeState>{{"node1", "allocated"}, {"node2", "down*"}}));
    EXPECT_EQ(answers[1].info->state, "PENDING");
    EXPECT_TRUE(answers[1].nodes.empty());
    EXPECT_EQ(answers[2].info->state, "COMPLETED");
    EXPECT_EQ(store_->writes.size(), writes);  // asking stores nothing: callers apply their end rule first

    // A dropped connection is reconnected once, and the answers still come.
    cluster_.drop_connection();
    const std::vector<JobAnswer> again = executor_->ask({"101"});
    ASSERT_TRUE(again[0].info.ok()) << again[0].info.error();
    EXPECT_EQ(again[0].info->state, "PENDING");
}

TEST_F(RunService, AStoredRunsJobIsAskedFollowedCancelledAndFetched) {
    const Result<Submission> sent = executor_->submit(demo());
    ASSERT_TRUE(sent.ok()) << sent.error();
    Result<StoredRun> stored = real_->find(sent->run.run_id);
    ASSERT_TRUE(stored.ok());
    Result<SlurmJob> job = executor_->job(*stored);
    ASSERT_TRUE(job.ok()) << job.error();

    cluster_.set_job("100", "RUNNING");
    const Result<remote::JobInfo> state = job->state();
    ASSERT_TRUE(state.ok()) << state.error();
    EXPECT_EQ(real_->find(sent->run.run_id)->state, RunState::kRunning);

    // Follow: the log's lines in order, every state stored, and the end.
    cluster_.append_log(stored->log_path, testing_util::mllog_line("train_loss", 2.5, 1, 8));
    cluster_.set_job("100", "COMPLETED");
    remote::RunFollowOptions options;
    options.interval = std::chrono::milliseconds(1);
    options.end_rule.settle = std::chrono::milliseconds(0);
    options.sleep = [](std::chrono::milliseconds) {};
    std::vector<std::string> keys;
    remote::RunFollowCallbacks callbacks;
    callbacks.on_line = [&](MllogStreamItem&& item) {
        if (item.kind == MllogLineKind::kEvent) keys.push_back(item.event.key);
    };
    const Result<remote::RunFollowOutcome> outcome = job->follow(options, callbacks);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->job.state, "COMPLETED");
    EXPECT_EQ(keys, std::vector<std::string>{"train_loss"});
    EXPECT_EQ(real_->find(sent->run.run_id)->state, RunState::kCompleted);

    // Fetch: the run's files; a name from the server that would leave the destination is not written.
    cluster_.append_log(stored->remote_dir + "/output/adapter_config.json", "{}");
    cluster_.append_log(stored->remote_dir + "/output/checkpoint-2/state.json", "{}");
    const fs::path dest = fs::path(dir_.path().toStdString()) / "fetched";
    const Result<FetchedRun> fetched = job->fetch(dest.string(), /*checkpoints=*/false);
    ASSERT_TRUE(fetched.ok()) << fetched.error();
    EXPECT_TRUE(fs::exists(dest / "run.json"));
    EXPECT_TRUE(fs::exists(dest / "run.sbatch"));
    EXPECT_TRUE(fs::exists(dest / "slurm-100.out"));
    EXPECT_TRUE(fs::exists(dest / "output/adapter_config.json"));
    EXPECT_FALSE(fs::exists(dest / "output/checkpoint-2"));
    EXPECT_EQ(fetched->files, 4u);

    // Cancel a second run's job: Slurm's CANCELLED, stored by the next ask.
    const Result<Submission> second = executor_->submit(demo());
    ASSERT_TRUE(second.ok());
    Result<SlurmJob> other = executor_->job(second->run);
    ASSERT_TRUE(other.ok());
    ASSERT_TRUE(other->cancel().ok());
    EXPECT_EQ(other->state()->state, "CANCELLED");
    EXPECT_EQ(real_->find(second->run.run_id)->state, RunState::kCancelled);

    // A run without a job is refused by name.
    StoredRun never;
    never.id = 7;
    EXPECT_NE(executor_->job(never).error().find("run 7 has no Slurm job"), std::string::npos);
}

TEST_F(RunService, AJobSlurmForgotWhoseLogSaysSuccessIsStoredCompletedAsTheAppWouldJudgeIt) {
    const Result<Submission> sent = executor_->submit(demo());
    ASSERT_TRUE(sent.ok()) << sent.error();
    Result<SlurmJob> job = executor_->job(sent->run);
    ASSERT_TRUE(job.ok());
    cluster_.append_log(sent->run.log_path,
                        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 9, \"event_type\": \"INTERVAL_END\", "
                        "\"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}\n");
    cluster_.set_job("100", "");  // accounting off: squeue, scontrol and sacct no longer know it
    remote::RunFollowOptions options;
    options.interval = std::chrono::milliseconds(1);
    options.end_rule.settle = std::chrono::milliseconds(0);
    options.sleep = [](std::chrono::milliseconds) {};
    const Result<remote::RunFollowOutcome> outcome = job->follow(options, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->job.state, "UNKNOWN");
    EXPECT_TRUE(outcome->success());
    const Result<StoredRun> row = real_->find(sent->run.run_id);
    EXPECT_EQ(row->state,
              RunState::kCompleted);  // RunTracker's word for the same job (from_slurm with the log)
    EXPECT_EQ(row->slurm_state, "UNKNOWN");
    EXPECT_NE(row->state_detail.find("run_stop: success"), std::string::npos) << row->state_detail;
}

TEST(JobWatch, AnEndedLookingWordCountsOnlyOnceItStaysUnlessTheJobComesBack) {
    remote::JobEndRule::Options options;
    options.settle = std::chrono::seconds(5);
    options.requeue_wait = std::chrono::seconds(60);
    JobWatch watch(options);
    const JobWatch::Clock::time_point t0{};
    using std::chrono::seconds;
    EXPECT_EQ(watch.saw("RUNNING", "", t0).state, RunState::kRunning);
    EXPECT_TRUE(watch.saw("RUNNING", "", t0 + seconds(1)).counts());
    // Requeued after its time limit: FAILED for a moment, then PENDING again.
    JobWatch::Judgment j = watch.saw("FAILED", "", t0 + seconds(2));
    EXPECT_EQ(j.state, RunState::kFailed);
    EXPECT_EQ(j.verdict, JobWatch::Verdict::kEnding);
    EXPECT_FALSE(j.counts());
    EXPECT_EQ(watch.saw("PENDING", "", t0 + seconds(4)).verdict, JobWatch::Verdict::kBack);
    // Its real end: COMPLETED over two polls that span the settle time.
    EXPECT_FALSE(watch.saw("COMPLETED", "", t0 + seconds(10)).counts());
    j = watch.saw("COMPLETED", "", t0 + seconds(16));
    EXPECT_EQ(j.verdict, JobWatch::Verdict::kEnded);
    EXPECT_TRUE(j.counts());
    // A job whose log announced its requeue may look ended for the requeue's wait, not the settle time.
    JobWatch announced(options);
    announced.saw_log_line(std::string(remote::kRequeueAnnouncement) + " 12");
    announced.saw("RUNNING", "", t0);
    announced.saw("COMPLETED", "", t0 + seconds(1));
    EXPECT_FALSE(announced.saw("COMPLETED", "", t0 + seconds(20)).counts());
    EXPECT_TRUE(announced.saw("COMPLETED", "", t0 + seconds(70)).counts());
    // Slurm forgot the job and its log said success: completed.
    JobWatch forgotten(options);
    EXPECT_EQ(forgotten.saw("UNKNOWN", "success", t0).state, RunState::kCompleted);
}

TEST_F(RunService, TheStoresOtherJobsAreAskedOnceAnAnswerAndStoredOnceTheirEndCounts) {
    const Result<Submission> mine = executor_->submit(demo());
    const Result<Submission> other = executor_->submit(demo());
    ASSERT_TRUE(mine.ok() && other.ok());
    remote::JobEndRule::Options options;
    options.settle = std::chrono::seconds(5);
    JobsWatch watch(options);
    const auto followed_here = [&](const StoredRun& row) { return row.id == mine->run.id; };
    const std::vector<StoredRun> rows = *real_->cluster_runs();
    EXPECT_EQ(watch.to_ask("hpc", {}, &rows, followed_here), std::vector<std::string>{"101"});
    EXPECT_TRUE(watch.to_ask("hpc", {}, &rows, followed_here).empty());  // its answer has not come
    EXPECT_TRUE(watch.to_ask("elsewhere", {}, &rows, followed_here).empty());

    const JobWatch::Clock::time_point t0{};
    remote::JobInfo job;
    job.job_id = "101";
    job.state = "RUNNING";
    job.node_list = "node01";
    EXPECT_TRUE(watch.answered(store_.get(), "hpc", "101", job, t0));
    EXPECT_EQ(real_->find(other->run.run_id)->state, RunState::kRunning);
    EXPECT_FALSE(watch.answered(store_.get(), "hpc", "101", job, t0));  // not asked again yet
    // Ended-looking: not stored until it has stayed over the settle time.
    job.state = "COMPLETED";
    ASSERT_EQ(watch.to_ask("hpc", {}, &*real_->cluster_runs(), followed_here).size(), 1u);
    EXPECT_FALSE(watch.answered(store_.get(), "hpc", "101", job, t0 + std::chrono::seconds(1)));
    EXPECT_EQ(real_->find(other->run.run_id)->state, RunState::kRunning);
    ASSERT_EQ(watch.to_ask("hpc", {}, &*real_->cluster_runs(), followed_here).size(), 1u);
    EXPECT_TRUE(watch.answered(store_.get(), "hpc", "101", job, t0 + std::chrono::seconds(7)));
    EXPECT_EQ(real_->find(other->run.run_id)->state, RunState::kCompleted);
    EXPECT_TRUE(watch.to_ask("hpc", {}, &*real_->cluster_runs(), followed_here).empty());  // ended: not asked

    // A session that went away: its questions are forgotten and asked again.
    const Result<Submission> third = executor_->submit(demo());
    ASSERT_TRUE(third.ok());
    ASSERT_EQ(watch.to_ask("hpc", {}, &*real_->cluster_runs(), followed_here).size(), 1u);
    EXPECT_TRUE(watch.to_ask("hpc", {}, &*real_->cluster_runs(), followed_here).empty());
    watch.forget_cluster("hpc");
    EXPECT_EQ(watch.to_ask("hpc", {}, &*real_->cluster_runs(), followed_here),
              std::vector<std::string>{"102"});
}

// The one watcher asks a followed job and the store's other jobs in one question per cluster, and never
// asks a job again while a question about it is on its way, whoever asked it.
TEST_F(RunService, OneWatcherAsksFollowedAndStoredJobsOnceUntilAnswered) {
    const Result<Submission> followed = executor_->submit(demo());
    const Result<Submission> other = executor_->submit(demo());
    ASSERT_TRUE(followed.ok() && other.ok());
    const std::string mine = followed->run.job_id, theirs = other->run.job_id;
    JobsWatch watch;
    const auto is_followed = [&](const StoredRun& row) { return row.id == followed->run.id; };
    const std::vector<StoredRun> rows = *real_->cluster_runs();

    // One poll's question: the followed job and the store's other one.
    EXPECT_EQ(watch.to_ask("hpc", {mine}, &rows, is_followed), (std::vector<std::string>{mine, theirs}));
    EXPECT_FALSE(watch.ask("hpc", mine));  // on its way already: a run_stop's ask waits for it
    EXPECT_TRUE(watch.to_ask("hpc", {mine}, &rows, is_followed).empty());
    // A session that is not up asks only what is followed: the store's jobs never cause a login.
    EXPECT_EQ(watch.to_ask("gpu", {"7"}, nullptr, is_followed), std::vector<std::string>{"7"});

    // A followed job's answer is its follower's: nothing stored; it can be asked again.
    remote::JobInfo running;
    running.job_id = mine;
    running.state = "RUNNING";
    EXPECT_FALSE(watch.answered(store_.get(), "hpc", mine, running, {}));
    EXPECT_EQ(real_->find(followed->run.run_id)->state, RunState::kPending);
    EXPECT_TRUE(watch.ask("hpc", mine));
    EXPECT_FALSE(watch.answered(store_.get(), "hpc", mine, std::nullopt, {}));  // a failed question
    EXPECT_TRUE(watch.ask("hpc", mine));

    // A stored job followed by the time its answer comes (the user resumed it) is its follower's too.
    running.job_id = theirs;
    EXPECT_FALSE(watch.answered(store_.get(), "hpc", theirs, running, {}, [](int64_t) { return true; }));
    EXPECT_EQ(real_->find(other->run.run_id)->state, RunState::kPending);
    // An answer nobody asked for is nobody's.
    EXPECT_FALSE(watch.answered(store_.get(), "hpc", theirs, running, {}));
    // A followed job's question dies with its session like any other.
    watch.forget_cluster("hpc");
    EXPECT_TRUE(watch.ask("hpc", mine));
}

// `slipway status` asks once: a job that looks ended at that moment is asked again after the settle time,
// so a job being requeued (FAILED for a moment, then PENDING) is stored live again, never ended; an end
// Slurm still says then is stored; a cluster that cannot be asked is named per job; without an
// ended-looking answer nothing waits; a store that refuses a write is reported.
TEST_F(RunService, AStatusThatAsksOnceAsksAgainBeforeStoringAnEnd) {
    const Result<Submission> requeued = executor_->submit(demo());
    const Result<Submission> completed = executor_->submit(demo());
    const Result<Submission> elsewhere = executor_->submit(demo());
    ASSERT_TRUE(requeued.ok() && completed.ok() && elsewhere.ok());
    std::vector<StoredRun> rows = *real_->cluster_runs();
    for (StoredRun& row : rows)
        if (row.id == elsewhere->run.id) row.cluster = "gpu";  // a second cluster, which is unreachable
    auto info = [](const std::string& job, const std::string& state) {
        remote::JobInfo out;
        out.job_id = job;
        out.state = state;
        return out;
    };
    int round = 0;
    std::vector<std::string> asked;
    const AskJobs ask = [&](const std::string& cluster, const std::vector<std::string>& jobs) {
        std::map<std::string, Result<remote::JobInfo>> out;
        for (const std::string& job : jobs) {
            asked.push_back(cluster + ":" + job);
            if (cluster == "gpu") {
                out.emplace(job, Status::Error("cannot connect to gpu: Connection refused"));
            } else if (job == requeued->run.job_id) {
                out.emplace(job, info(job, round == 0 ? "FAILED" : "PENDING"));
            } else {
                out.emplace(job, info(job, "COMPLETED"));
            }
        }
        if (cluster == "hpc") ++round;
        return out;
    };
    std::vector<std::chrono::milliseconds> waits;
    remote::JobEndRule::Options rule;
    rule.settle = std::chrono::seconds(5);
    const LiveJobsCheck checked = check_live_jobs(
        *store_, rows, ask, [&](std::chrono::milliseconds d) { waits.push_back(d); }, rule);
    EXPECT_EQ(waits, std::vector<std::chrono::milliseconds>{std::chrono::seconds(5)});
    EXPECT_EQ(round, 2);
    EXPECT_EQ(real_->find(requeued->run.run_id)->state, RunState::kPending);  // never stored failed
    EXPECT_EQ(real_->find(completed->run.run_id)->state, RunState::kCompleted);
    EXPECT_EQ(real_->find(elsewhere->run.run_id)->state, RunState::kPending);
    const auto unreachable = checked.answers.find({"gpu", elsewhere->run.job_id});
    ASSERT_NE(unreachable, checked.answers.end());
    EXPECT_EQ(unreachable->second.error(), "cannot connect to gpu: Connection refused");
    EXPECT_EQ(checked.answers.at({"hpc", requeued->run.job_id})->state, "PENDING");  // the last answer
    EXPECT_TRUE(checked.store_problems.empty());

    // Nothing ended-looking: one question, no wait. A refused write is reported.
    waits.clear();
    asked.clear();
    store_->refuse = "set_state";
    const LiveJobsCheck again = check_live_jobs(
        *store_, {*real_->find(requeued->run.run_id)}, ask,
        [&](std::chrono::milliseconds d) { waits.push_back(d); }, rule);
    EXPECT_TRUE(waits.empty());
    EXPECT_EQ(asked, std::vector<std::string>{"hpc:" + requeued->run.job_id});
    ASSERT_FALSE(again.store_problems.empty());
    EXPECT_EQ(again.store_problems.front(), "database or disk is full");
}

TEST_F(RunService, AFollowedJobThatIsRequeuedIsStoredLiveAgainAndEndsCompleted) {
    const Result<Submission> sent = executor_->submit(demo());
    ASSERT_TRUE(sent.ok()) << sent.error();
    Result<SlurmJob> job = executor_->job(sent->run);
    ASSERT_TRUE(job.ok());
    // Slurm's word at each poll: the job fails its first run at the time limit and is requeued.
    const std::vector<std::string> script = {"RUNNING", "FAILED", "PENDING", "RUNNING", "COMPLETED"};
    size_t poll = 0;
    cluster_.set_job("100", script[0]);
    remote::RunFollowOptions options;
    options.interval = std::chrono::milliseconds(1000);
    options.end_rule.settle = std::chrono::milliseconds(2500);
    options.sleep = [&](std::chrono::milliseconds) {
        poll = std::min(poll + 1, script.size() - 1);
        cluster_.set_job("100", script[poll]);
    };
    store_->writes.clear();
    const Result<remote::RunFollowOutcome> outcome = job->follow(options, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->job.state, "COMPLETED");
    // The passing FAILED is never stored: an ended row is not reopened, so the requeued run would stay
    // failed.
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"set_state running", "set_state pending",
                                                        "set_state running", "set_state completed"}));
    EXPECT_EQ(real_->find(sent->run.run_id)->state, RunState::kCompleted);
}

TEST_F(RunService, AnEndedRunIsNeverMadeLiveAgainByALateAnswer) {
    const Result<Submission> sent = executor_->submit(demo());
    ASSERT_TRUE(sent.ok());
    ASSERT_TRUE(
        store_->set_state(sent->run.id, RunState::kCancelled, "", "CANCELLED", StateWrite::kAlways).ok());
    remote::JobInfo late;
    late.state = "RUNNING";
    ASSERT_TRUE(store_job_state(*store_, sent->run.id, late).ok());
    EXPECT_EQ(real_->find(sent->run.run_id)->state, RunState::kCancelled);
}

}  // namespace
}  // namespace slipway::app
