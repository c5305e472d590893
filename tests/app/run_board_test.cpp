// The run board (service/run_board.h) headless: a run's life through its seams, with no Qt event loop and no
// thread. The seams are fakes that write down what they are asked and answer only when the test says (as a
// cluster's session answers later, or never), with the real store behind a recording one; the faults they
// inject are a missing profile, a lost answer, a connection that drops, a late answer, and a listener that
// releases a run while it is being told about it.
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>

#include "contract/mllog_keys.h"
#include "real_store_test.h"
#include "service/run_board.h"
#include "test_util.h"

namespace slipway::app {
namespace {

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : ",") + p;
    return out;
}

class FakeFollows : public LogFollows {
public:
    std::vector<std::string> asked;
    int follow(const std::string& path, uint64_t offset) override {
        asked.push_back("follow " + path + " @" + std::to_string(offset));
        return next_++;
    }
    void finish(int id) override { asked.push_back("finish " + std::to_string(id)); }
    void stop(int id) override { asked.push_back("stop " + std::to_string(id)); }

private:
    int next_ = 1;
};

class FakeClusters : public ClusterLinks {
public:
    std::set<std::string> profiles{"hpc"};
    bool session_gone = false;  // the profile went between has_profile() and the request: nothing is sent
    std::vector<std::string> asked;
    std::string last_run_id;
    int last_request = 0;

    bool has_profile(const std::string& profile) override { return profiles.count(profile) != 0; }
    int submit(const std::string& profile, const RunConfig& config, const std::string& run_id) override {
        asked.push_back("submit " + profile + " " + config.name);
        last_run_id = run_id;
        return last_request = session_gone ? 0 : next_++;
    }
    void ask(const std::string& profile, const std::vector<std::string>& jobs) override {
        asked.push_back("ask " + profile + " " + join(jobs));
    }
    int cancel(const std::string& profile, const std::string& job) override {
        asked.push_back("cancel " + profile + " " + job);
        return last_request = session_gone ? 0 : next_++;
    }
    int follow(const std::string& profile, const std::string& path, uint64_t offset) override {
        asked.push_back("follow " + profile + " " + path + " @" + std::to_string(offset));
        return next_++;
    }
    void finish_follow(const std::string& profile, int id) override {
        asked.push_back("finish " + profile + " " + std::to_string(id));
    }
    void stop_follow(const std::string& profile, int id) override {
        asked.push_back("stop " + profile + " " + std::to_string(id));
    }

private:
    int next_ = 1;  // as a session's ids, which may equal the file follower's
};

class FakePoints : public PointWriter {
public:
    std::vector<std::string> asked;
    void append(int64_t run, std::vector<MetricPointRow> rows, const RunMetrics&, uint64_t offset) override {
        asked.push_back("append " + std::to_string(run) + " " + std::to_string(rows.size()) + " @" +
                        std::to_string(offset));
    }
    void reset(int64_t run) override { asked.push_back("reset " + std::to_string(run)); }
    Status close_run(int64_t run) override {
        asked.push_back("close " + std::to_string(run));
        return Status::Ok();
    }
};

// Runs what was asked for later only when the test says time has passed.
class FakeTimer : public BoardTimer {
public:
    std::vector<std::pair<int, std::function<void()>>> pending;
    void later(int ms, std::function<void()> fn) override { pending.emplace_back(ms, std::move(fn)); }
    void run_all() {
        auto due = std::move(pending);
        pending.clear();
        for (auto& [ms, fn] : due)
            fn();
    }
};

class Events : public RunEvents {
public:
    std::vector<std::string> told;
    std::function<void(int)> on_changed;  // a listener (a page) reacting at once

    void added(int key) override { told.push_back("added " + std::to_string(key)); }
    void changed(int key) override {
        told.push_back("changed " + std::to_string(key));
        if (on_changed) on_changed(key);
    }
    void batch_folded(int key, const std::array<size_t, kMetricCount>&) override {
        told.push_back("folded " + std::to_string(key));
    }
    void loaded(int key) override { told.push_back("loaded " + std::to_string(key)); }
    void released(int key) override { told.push_back("released " + std::to_string(key)); }
    void alert(int key, const RunAlert& alert) override {
        told.push_back("alert " + std::to_string(key) + " " + alert.message);
    }
    void local_finished(int key, int code) override {
        told.push_back("local_finished " + std::to_string(key) + " " + std::to_string(code));
    }
    void connection(const std::string& profile, bool up, const std::string& why) override {
        told.push_back("connection " + profile + (up ? " up" : " down: ") + why);
    }
    void notice(const Notice& notice) override { told.push_back("notice " + wording(notice)); }
    std::string wording(const Notice& notice) override {
        return std::to_string(static_cast<int>(notice.kind)) + "(" + join(notice.args) + ")";
    }
    void store_problem(const std::string& why) override { told.push_back("store_problem " + why); }
    void store_changed() override { told.push_back("store_changed"); }

    bool saw(const std::string& what) const {
        return std::find(told.begin(), told.end(), what) != told.end();
    }
};

MllogEvent event(std::string_view key, MllogJson value, MllogJson metadata = MllogJson::object()) {
    MllogEvent e;
    e.time_ms = now_ms();
    e.event_type = std::string(kPointInTime);
    e.key = std::string(key);
    e.value = std::move(value);
    e.metadata = std::move(metadata);
    return e;
}

class RunBoardTest : public RealStoreTest {
protected:
    void SetUp() override {
        RealStoreTest::SetUp();
        if (HasFatalFailure()) return;
        RunBoard::Options options;
        options.end_rule.settle = std::chrono::milliseconds(0);  // an end counts at its second answer
        board_ = std::make_unique<RunBoard>(
            options, RunBoard::Seams{store_.get(), &points_, &files_, &clusters_, &timer_, &events_});
    }

    // Submits the demo to hpc; the session's worker writes its row (submitting, then pending with `job`)
    // and answers.
    int submit_and_answer(const std::string& job) {
        const Result<int> key = board_->submit_cluster(testing_util::demo_config(), "hpc");
        EXPECT_TRUE(key.ok()) << key.error();
        const int64_t row = worker_writes_row(job);
        board_->submitted("hpc", clusters_.last_request, answer(row, job));
        return key.ok() ? *key : 0;
    }
    // What the session's worker writes: the row submitting, then pending with its job.
    int64_t worker_writes_row(const std::string& job) {
        StoredRun row;
        row.run_id = clusters_.last_run_id;
        row.name = testing_util::demo_config().name;
        row.cluster = "hpc";
        row.state = RunState::kSubmitting;
        const Result<int64_t> id = real_->add(row);
        EXPECT_TRUE(id.ok()) << id.error();
        remote::RunRecord record{row.run_id, "demo", "hpc", job, "", "/home/u/runs/" + row.run_id, "", ""};
        EXPECT_TRUE(real_->record_job(record, "{}").ok());
        return id.ok() ? *id : 0;
    }
    SubmissionAnswer answer(int64_t row, const std::string& job) const {
        SubmissionAnswer a;
        a.ok = true;
        a.store_id = row;
        a.job_id = job;
        a.remote_dir = "/home/u/runs/" + clusters_.last_run_id;
        a.log_path = a.remote_dir + "/slurm-" + job + ".out";
        return a;
    }
    const TrackedRun& run(int key) const { return *board_->run(key); }

    FakeFollows files_;
    FakeClusters clusters_;
    FakePoints points_;
    FakeTimer timer_;
    Events events_;
    std::unique_ptr<RunBoard> board_;
};

TEST_F(RunBoardTest, ASubmissionLivesItsWholeLifeThroughTheSeams) {
    const int key = submit_and_answer("12");
    ASSERT_NE(key, 0);
    const std::string log = run(key).log_path;
    EXPECT_EQ(clusters_.asked, (std::vector<std::string>{"submit hpc " + testing_util::demo_config().name,
                                                         "follow hpc " + log + " @0", "ask hpc 12"}));
    EXPECT_EQ(run(key).state, RunState::kPending);
    EXPECT_TRUE(run(key).cancellable);
    EXPECT_TRUE(store_->writes.empty());  // the worker wrote the row: the board takes its word over

    board_->job_state("hpc", true, "12", "RUNNING", "node01");
    EXPECT_EQ(run(key).state, RunState::kRunning);
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"set_state running"}));

    // The log's lines fold into the curves and go to the row's writer with their offset.
    const int follow = run(key).follow_id;
    const std::vector<MllogEvent> events{event(mllog_key::kRunStart, nullptr),
                                         event(mllog_key::kTrainLoss, 2.5, {{"step_num", 1}}),
                                         event(mllog_key::kTrainLoss, 2.0, {{"step_num", 2}})};
    LogBatch batch;
    batch.follow_id = follow;
    batch.offset = 300;
    batch.events = &events;
    board_->cluster_batch("other", batch);  // another cluster's follow with the same id: not this run's
    EXPECT_TRUE(points_.asked.empty());
    board_->cluster_batch("hpc", batch);
    EXPECT_EQ(points_.asked,
              (std::vector<std::string>{"append " + std::to_string(run(key).store_id) + " 2 @300"}));
    EXPECT_EQ(run(key).log_offset, 300u);
    EXPECT_TRUE(events_.saw("folded " + std::to_string(key)));

    // Slurm's end counts at its second answer; the log's tail is read to its end, one alert.
    board_->job_state("hpc", true, "12", "COMPLETED", "");
    EXPECT_EQ(run(key).state, RunState::kRunning);
    ASSERT_EQ(timer_.pending.size(), 1u);  // asked again once the word can count
    clusters_.asked.clear();
    timer_.run_all();
    EXPECT_EQ(clusters_.asked, (std::vector<std::string>{"ask hpc 12"}));
    board_->job_state("hpc", true, "12", "COMPLETED", "");
    EXPECT_EQ(run(key).state, RunState::kCompleted);
    EXPECT_FALSE(run(key).cancellable);
    EXPECT_EQ(clusters_.asked.back(), "finish hpc " + std::to_string(follow));
    EXPECT_TRUE(events_.saw("alert " + std::to_string(key) + " " +
                            events_.wording({Notice::Kind::kJobEnded, {"12", "COMPLETED"}})));
    EXPECT_EQ(history_->run(run(key).store_id)->state, RunState::kCompleted);

    // A late answer reopens nothing.
    board_->job_state("hpc", true, "12", "RUNNING", "node01");
    EXPECT_EQ(run(key).state, RunState::kCompleted);

    const int64_t row = run(key).store_id;
    board_->release(key);
    EXPECT_EQ(board_->run(key), nullptr);
    EXPECT_EQ(points_.asked.back(), "close " + std::to_string(row));
    EXPECT_EQ(events_.told.back(), "released " + std::to_string(key));
}

TEST_F(RunBoardTest, AProfileThatIsNotThereIsRefusedByName) {
    const Result<int> key = board_->submit_cluster(testing_util::demo_config(), "gone");
    ASSERT_FALSE(key.ok());
    EXPECT_EQ(key.error(), "no cluster profile named gone");
    EXPECT_FALSE(board_->open_cluster_log("gone", "/scratch/log.txt").ok());
    EXPECT_TRUE(clusters_.asked.empty());
    EXPECT_TRUE(events_.told.empty());

    // A stored job whose profile was removed is not followed again.
    const int submitted = submit_and_answer("12");
    const int64_t row = run(submitted).store_id;
    board_->release(submitted);
    clusters_.profiles.clear();
    const Result<int> again = board_->resume(row);
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.error().find("ran on cluster hpc, which has no profile any more"), std::string::npos)
        << again.error();
}

// While the submission waits (the engine built on the cluster first), the run says how it goes; the answer
// then replaces that with Slurm's word.
TEST_F(RunBoardTest, ASubmissionUnderWaySaysHowItGoes) {
    const Result<int> key = board_->submit_cluster(testing_util::demo_config(), "hpc");
    ASSERT_TRUE(key.ok()) << key.error();
    board_->submit_progress("hpc", clusters_.last_request + 1, "another request's");
    board_->submit_progress("other", clusters_.last_request, "another cluster's");
    EXPECT_EQ(run(*key).state_detail, "");
    board_->submit_progress("hpc", clusters_.last_request,
                            "building the engine in job 11 (log /x/build-11.out)");
    EXPECT_EQ(run(*key).state, RunState::kSubmitting);
    EXPECT_EQ(run(*key).state_detail, "building the engine in job 11 (log /x/build-11.out)");
    EXPECT_TRUE(events_.saw("changed " + std::to_string(*key)));
    board_->submitted("hpc", clusters_.last_request, answer(worker_writes_row("12"), "12"));
    EXPECT_EQ(run(*key).state, RunState::kPending);
    EXPECT_EQ(run(*key).state_detail, "");
}

TEST_F(RunBoardTest, ARefusedSubmissionEndsFailedWithItsReasonAndOneAlert) {
    const Result<int> key = board_->submit_cluster(testing_util::demo_config(), "hpc");
    ASSERT_TRUE(key.ok());
    SubmissionAnswer refused;
    refused.error = "sbatch: error: invalid partition";
    refused.store_problem = "database or disk is full";
    board_->submitted("hpc", clusters_.last_request + 1, refused);  // another request's answer
    EXPECT_EQ(run(*key).state, RunState::kSubmitting);
    board_->submitted("hpc", clusters_.last_request, refused);
    EXPECT_EQ(run(*key).state, RunState::kFailed);
    EXPECT_EQ(run(*key).state_detail, "submit: sbatch: error: invalid partition");
    EXPECT_TRUE(events_.saw("store_problem database or disk is full"));
    EXPECT_EQ(std::count(events_.told.begin(), events_.told.end(),
                         "alert " + std::to_string(*key) + " " +
                             events_.wording({Notice::Kind::kSubmitFailed, {refused.error}})),
              1);
    board_->submitted("hpc", clusters_.last_request, refused);  // a repeated answer is nobody's now
    EXPECT_EQ(std::count_if(events_.told.begin(), events_.told.end(),
                            [](const std::string& t) { return t.rfind("alert ", 0) == 0; }),
              1);
    EXPECT_EQ(clusters_.asked.size(), 1u);  // nothing followed, nothing asked
}

TEST_F(RunBoardTest, AConnectionIsToldOncePerChangeAndAnUpClusterIsAskedAboutTheStoresOtherJobs) {
    // A job another process submitted to hpc: its row only.
    StoredRun other;
    other.name = "from-the-cli";
    other.cluster = "hpc";
    other.run_id = "from-the-cli-20261128-030000-abcd";
    other.job_id = "77";
    other.state = RunState::kPending;
    ASSERT_TRUE(real_->add(other).ok());

    board_->poll_jobs();  // the connection is not known to be up: no new SSH prompt for the store's jobs
    EXPECT_TRUE(clusters_.asked.empty());
    board_->connection("hpc", true, "");
    board_->connection("hpc", true, "");
    EXPECT_EQ(std::count(events_.told.begin(), events_.told.end(), "connection hpc up"), 1);
    board_->poll_jobs();
    EXPECT_EQ(clusters_.asked, (std::vector<std::string>{"ask hpc 77"}));
    board_->poll_jobs();  // its question is unanswered: not asked again
    EXPECT_EQ(clusters_.asked.size(), 1u);
    board_->job_state("hpc", true, "77", "PENDING", "(Priority)");

    // A shown run's job joins the same question; the store's answer is stored, the run's is judged.
    const int key = submit_and_answer("12");
    board_->job_state("hpc", true, "12", "PENDING", "(Resources)");
    clusters_.asked.clear();
    board_->poll_jobs();
    EXPECT_EQ(clusters_.asked, (std::vector<std::string>{"ask hpc 12,77"}));
    board_->job_state("hpc", true, "77", "RUNNING", "node02");
    EXPECT_EQ(real_->find(other.run_id)->state, RunState::kRunning);
    EXPECT_EQ(run(key).state, RunState::kPending);
    board_->job_state("hpc", true, "12", "PENDING", "(Resources)");

    // Down: only the shown run's job is asked about.
    board_->connection("hpc", false, "Connection reset by peer");
    EXPECT_TRUE(events_.saw("connection hpc down: Connection reset by peer"));
    clusters_.asked.clear();
    board_->poll_jobs();
    EXPECT_EQ(clusters_.asked, (std::vector<std::string>{"ask hpc 12"}));
}

TEST_F(RunBoardTest, ACancelsAnswerIsMatchedByItsClusterAndRequest) {
    const int key = submit_and_answer("12");
    board_->job_state("hpc", true, "12", "RUNNING", "node01");
    ASSERT_TRUE(board_->cancel(key).ok());
    EXPECT_EQ(clusters_.asked.back(), "cancel hpc 12");
    const int request = clusters_.last_request;
    EXPECT_TRUE(events_.saw("notice " + events_.wording({Notice::Kind::kScancelSent, {"12"}})));

    board_->cancelled("other", request, false, "no");  // another cluster's request with the same number
    board_->cancelled("hpc", request, false, "scancel: error: Access/permission denied");
    EXPECT_TRUE(events_.saw(
        "notice " +
        events_.wording({Notice::Kind::kScancelFailed, {"12", "scancel: error: Access/permission denied"}})));
    const std::string refusal =
        "notice " +
        events_.wording({Notice::Kind::kScancelFailed, {"12", "scancel: error: Access/permission denied"}});
    EXPECT_EQ(std::count(events_.told.begin(), events_.told.end(), refusal), 1);
    const std::vector<std::string> asked_before = clusters_.asked;
    board_->cancelled("hpc", request, true, "");  // answered once: a second answer is nobody's
    EXPECT_EQ(run(key).state, RunState::kRunning);
    EXPECT_FALSE(run(key).watch.ended());
    EXPECT_EQ(clusters_.asked, asked_before);

    ASSERT_TRUE(board_->cancel(key).ok());
    clusters_.asked.clear();
    board_->cancelled("hpc", clusters_.last_request, true, "");
    EXPECT_EQ(clusters_.asked, (std::vector<std::string>{"ask hpc 12"}));  // Slurm's word ends it
    EXPECT_TRUE(run(key).watch.ended());  // the engine's "aborted" is the cancel: no failure alert

    const int file = board_->follow_log(dir_.filePath("mllog.txt").toStdString(), "demo");
    const Status refused = board_->cancel(file);
    EXPECT_FALSE(refused.ok());
    EXPECT_EQ(refused.message(), "demo is not a running job");
}

TEST_F(RunBoardTest, AReplacedProfileFollowsItsRunsOnAndAdoptsASubmissionWhoseAnswerWasLost) {
    const int followed = submit_and_answer("12");
    board_->job_state("hpc", true, "12", "RUNNING", "node01");
    const std::string log = run(followed).log_path;
    LogBatch batch;
    const std::vector<MllogEvent> none;
    batch.follow_id = run(followed).follow_id;
    batch.offset = 4096;
    batch.events = &none;
    board_->cluster_batch("hpc", batch);

    // A second submission: the worker wrote its job, but its answer died with the session.
    const Result<int> lost = board_->submit_cluster(testing_util::demo_config(), "hpc");
    ASSERT_TRUE(lost.ok());
    const int64_t lost_row = worker_writes_row("13");

    board_->cluster_gone("hpc", /*replaced=*/true);
    EXPECT_EQ(run(followed).follow_id, 0);  // its follow went with the old session
    clusters_.asked.clear();
    ASSERT_EQ(timer_.pending.size(), 1u);  // followed again once the new session exists
    timer_.run_all();
    EXPECT_EQ(run(followed).state, RunState::kRunning);
    EXPECT_EQ(run(*lost).job_id, "13");
    EXPECT_EQ(run(*lost).store_id, lost_row);
    EXPECT_EQ(run(*lost).state, RunState::kPending);
    EXPECT_TRUE(run(*lost).cancellable);
    const std::vector<std::string> want{"follow hpc " + log + " @4096", "ask hpc 12",
                                        "follow hpc " + run(*lost).log_path + " @0", "ask hpc 13"};
    EXPECT_EQ(clusters_.asked, want);
}

TEST_F(RunBoardTest, ARemovedProfilesSubmissionIsUnknownAndItsLiveRunNoLongerCancellable) {
    const int live = submit_and_answer("12");
    const Result<int> under_way = board_->submit_cluster(testing_util::demo_config(), "hpc");
    ASSERT_TRUE(under_way.ok());
    clusters_.profiles.clear();
    board_->cluster_gone("hpc", /*replaced=*/false);
    EXPECT_TRUE(timer_.pending.empty());
    EXPECT_EQ(run(*under_way).state, RunState::kUnknown);
    EXPECT_FALSE(run(live).cancellable);
    EXPECT_EQ(run(live).follow_id, 0);
}

TEST_F(RunBoardTest, AListenerThatReleasesARunWhileItIsToldLeavesNothingDangling) {
    // A page that drops a run the moment it changes (ASan would see a use after free).
    events_.on_changed = [this](int key) { board_->release(key); };
    const Result<int> key = board_->submit_cluster(testing_util::demo_config(), "hpc");
    ASSERT_TRUE(key.ok());
    const int64_t row = worker_writes_row("12");
    board_->submitted("hpc", clusters_.last_request, answer(row, "12"));
    EXPECT_EQ(board_->run(*key), nullptr);
    EXPECT_EQ(clusters_.asked,
              (std::vector<std::string>{"submit hpc " +
                                        testing_util::demo_config().name}));  // nothing followed for it

    // A log whose run_stop ends it, released while its end is told.
    events_.on_changed = nullptr;
    const int file = board_->follow_log(dir_.filePath("mllog.txt").toStdString(), "demo");
    events_.on_changed = [this](int k) { board_->release(k); };
    const std::vector<MllogEvent> stop{event(mllog_key::kRunStop, nullptr, {{"status", "success"}})};
    LogBatch batch;
    batch.follow_id = run(file).follow_id;
    batch.events = &stop;
    board_->file_batch(batch);
    EXPECT_EQ(board_->run(file), nullptr);
    EXPECT_TRUE(events_.saw("released " + std::to_string(file)));
}

TEST_F(RunBoardTest, AnOpenedLogIsReadOnceIntoItsOwnRowAndAMissingOneIsRefused) {
    const Result<int> missing = board_->open_log(dir_.filePath("none.txt").toStdString());
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error(), "cannot open log file '" + dir_.filePath("none.txt").toStdString() +
                                   "': No such file or directory");
    const Result<int> folder = board_->open_log(dir_.path().toStdString());
    ASSERT_FALSE(folder.ok());
    EXPECT_NE(folder.error().find("not a readable file"), std::string::npos);

    const std::string path = dir_.filePath("mllog.txt").toStdString();
    std::ofstream(path) << "\n";
    const Result<int> key = board_->open_log(path);
    ASSERT_TRUE(key.ok()) << key.error();
    EXPECT_EQ(files_.asked, (std::vector<std::string>{"follow " + path + " @0"}));
    EXPECT_EQ(run(*key).state, RunState::kReading);
    const int64_t row = run(*key).store_id;
    ASSERT_NE(row, 0);

    const std::vector<MllogEvent> events{event(mllog_key::kRunStart, nullptr),
                                         event(mllog_key::kTrainLoss, 2.5, {{"step_num", 1}}),
                                         event(mllog_key::kRunStop, nullptr, {{"status", "success"}})};
    LogBatch batch;
    batch.follow_id = run(*key).follow_id;
    batch.offset = 900;
    batch.events = &events;
    board_->file_batch(batch);  // not the end yet: the rest is asked for
    EXPECT_EQ(files_.asked.back(), "finish " + std::to_string(batch.follow_id));
    const std::vector<MllogEvent> none;
    LogBatch last;
    last.follow_id = batch.follow_id;
    last.finished = true;
    last.offset = 900;
    last.events = &none;
    board_->file_batch(last);
    EXPECT_EQ(run(*key).state, RunState::kCompleted);
    EXPECT_FALSE(run(*key).loading);
    EXPECT_TRUE(events_.saw("loaded " + std::to_string(*key)));
    EXPECT_EQ(history_->run(row)->state, RunState::kCompleted);

    // Opened again: the same row, read again.
    const Result<int> again = board_->open_log(path);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(run(*again).store_id, row);
    EXPECT_EQ(board_->run(*key), nullptr);
}

TEST_F(RunBoardTest, AClusterLogNoLongerFollowedIsIncompleteUnlessItsRowEndedElsewhere) {
    const Result<int> first = board_->open_cluster_log("hpc", "/scratch/u/train.log");
    ASSERT_TRUE(first.ok()) << first.error();
    EXPECT_EQ(clusters_.asked, (std::vector<std::string>{"follow hpc /scratch/u/train.log @0"}));
    EXPECT_EQ(run(*first).name, "train.log @ hpc");
    const int64_t row = run(*first).store_id;
    ASSERT_NE(row, 0);
    EXPECT_EQ(history_->run(row)->state, RunState::kFollowing);
    const int follow = run(*first).follow_id;
    board_->release(*first);
    EXPECT_EQ(clusters_.asked.back(), "stop hpc " + std::to_string(follow));
    EXPECT_EQ(history_->run(row)->state, RunState::kIncomplete);

    // Opened again: the same row, followed on; another window read it to its end meanwhile.
    const Result<int> again = board_->open_cluster_log("hpc", "/scratch/u/train.log");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(run(*again).store_id, row);
    ASSERT_TRUE(real_->set_state(row, RunState::kCompleted, "success", "", StateWrite::kAlways).ok());
    board_->release(*again);
    EXPECT_EQ(history_->run(row)->state, RunState::kCompleted);
}

TEST_F(RunBoardTest, ARequestThatReachedNoSessionIsAnErrorAndLeavesNoRunWaiting) {
    clusters_.session_gone = true;
    const Result<int> key = board_->submit_cluster(testing_util::demo_config(), "hpc");
    ASSERT_FALSE(key.ok());
    EXPECT_EQ(key.error(), "no cluster profile named hpc");
    EXPECT_TRUE(board_->keys().empty());  // no run left "submitting" for an answer that cannot come
    EXPECT_TRUE(events_.told.empty());

    clusters_.session_gone = false;
    const int live = submit_and_answer("12");
    clusters_.session_gone = true;
    const Status cancel = board_->cancel(live);
    ASSERT_FALSE(cancel.ok());
    EXPECT_EQ(cancel.message(), "no cluster profile named hpc");
    EXPECT_FALSE(events_.saw("notice " + events_.wording({Notice::Kind::kScancelSent, {"12"}})));
}

TEST_F(RunBoardTest, ClosingStopsEveryFollowAndClosesEveryQueueOnce) {
    const std::string path = dir_.filePath("mllog.txt").toStdString();
    std::ofstream(path) << "\n";
    const Result<int> file = board_->open_log(path);
    ASSERT_TRUE(file.ok()) << file.error();
    const int follow = run(*file).follow_id;
    const int64_t row = run(*file).store_id;
    const int job = submit_and_answer("12");  // followed on the cluster: its session stops its follows
    const int64_t job_row = run(job).store_id;
    files_.asked.clear();
    points_.asked.clear();

    board_->close();
    EXPECT_EQ(files_.asked, (std::vector<std::string>{"stop " + std::to_string(follow)}));
    EXPECT_EQ(points_.asked,
              (std::vector<std::string>{"close " + std::to_string(row), "close " + std::to_string(job_row)}));
    EXPECT_NE(board_->run(*file), nullptr);  // still readable while the app closes
    board_->close();
    board_.reset();
    EXPECT_EQ(files_.asked.size(), 1u);
    EXPECT_EQ(points_.asked.size(), 2u);
}

}  // namespace
}  // namespace slipway::app
