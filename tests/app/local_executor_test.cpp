// The run service on This computer: ChildProcess (service/child_process.h) with real processes, and the
// LocalExecutor (service/local_executor.h) running tests/app/fake_engine.sh over the real run history, with
// a store in between that records every write. What it must do: report a child's exit code or signal, put
// its output in its file, name a program that cannot start, stop a child politely first and then kill its
// whole group (ranks included), write a local run's row once per state change, say a failed engine's last
// words, and never lose a run because the store failed. And what a window needs beyond one job: LocalJobs
// (polled together, closed together), its own engine followed again as its own run (follow_again.h), and
// another process's run taken over when that process died untold (orphaned_run.h).
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "history/history_run_store.h"
#include "history/run_history.h"
#include "real_store_test.h"
#include "service/child_process.h"
#include "service/follow_again.h"
#include "service/local_executor.h"
#include "service/local_jobs.h"
#include "service/orphaned_run.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

ProcessSpec shell(const std::string& script, const std::string& output = {}) {
    return ProcessSpec{"/bin/sh", {"-c", script}, {}, output, {}, false};
}

// Alive and not a zombie (an orphan's zombie waits for init, which may not reap here).
bool alive(pid_t pid) {
    const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    if (stat.empty()) return false;
    const size_t paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

pid_t pid_in(const std::string& file) {
    pid_t pid = 0;
    for (int i = 0; i < 750 && pid == 0; ++i) {  // 15 s: a loaded machine starts processes slowly
        std::ifstream(file) >> pid;
        if (pid == 0) std::this_thread::sleep_for(20ms);
    }
    return pid;
}

TEST(ChildProcess, ItsExitCodeSignalAndOutputAreItsOwn) {
    QTemporaryDir dir;
    const std::string out = dir.filePath("out.txt").toStdString();
    Result<ChildProcess> p = ChildProcess::start(shell("echo said; echo complained >&2; exit 3", out));
    ASSERT_TRUE(p.ok()) << p.error();
    const std::optional<ProcessExit> exit = p->wait_for(10s);
    ASSERT_TRUE(exit.has_value());
    EXPECT_EQ(exit->code, 3);
    EXPECT_FALSE(exit->success());
    EXPECT_EQ(exit->describe(), "exit code 3");
    EXPECT_EQ(read_file(out), "said\ncomplained\n");  // stderr with stdout unless told apart
    EXPECT_EQ(p->poll()->code, 3);                    // reaped once, answered again

    Result<ChildProcess> crash = ChildProcess::start(shell("kill -SEGV $$"));
    ASSERT_TRUE(crash.ok());
    const ProcessExit crashed = *crash->wait_for(10s);
    EXPECT_EQ(crashed.signal, SIGSEGV);
    EXPECT_EQ(crashed.describe().rfind("killed by signal 11 (", 0), 0u) << crashed.describe();

    // Its own folder; a product file emptied first, errors apart from it.
    const std::string product = dir.filePath("product.txt").toStdString();
    const std::string errors = dir.filePath("errors.txt").toStdString();
    std::ofstream(product) << "an older product\n";
    ProcessSpec spec = shell("pwd; echo warned >&2", product);
    spec.working_dir = dir.path().toStdString();
    spec.error_file = errors;
    spec.truncate_output = true;
    Result<ChildProcess> in_dir = ChildProcess::start(spec);
    ASSERT_TRUE(in_dir.ok()) << in_dir.error();
    EXPECT_TRUE(in_dir->wait_for(10s)->success());
    EXPECT_EQ(read_file(product), fs::canonical(dir.path().toStdString()).string() + "\n");
    EXPECT_EQ(read_file(errors), "warned\n");
}

TEST(ChildProcess, OneThatCannotStartIsNamedWithWhy) {
    QTemporaryDir dir;
    Result<ChildProcess> missing =
        ChildProcess::start({"/nonexistent/slipway-engine", {}, {}, {}, {}, false});
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error(), "cannot start /nonexistent/slipway-engine: No such file or directory");

    const std::string no_folder = dir.filePath("gone/engine.log").toStdString();
    Result<ChildProcess> no_log = ChildProcess::start(shell("true", no_folder));
    ASSERT_FALSE(no_log.ok());
    EXPECT_NE(no_log.error().find("cannot write " + no_folder + ": No such file or directory"),
              std::string::npos)
        << no_log.error();

    ProcessSpec elsewhere = shell("true");
    elsewhere.working_dir = dir.filePath("not-made").toStdString();
    Result<ChildProcess> no_dir = ChildProcess::start(elsewhere);
    ASSERT_FALSE(no_dir.ok());
    EXPECT_NE(no_dir.error().find("working folder " + elsewhere.working_dir), std::string::npos)
        << no_dir.error();
}

TEST(ChildProcess, StopAsksFirstThenKillsTheWholeGroup) {
    QTemporaryDir dir;
    const std::string rank_file = dir.filePath("rank.pid").toStdString();
    // Obeys SIGTERM (exit 7) but leaves a rank behind.
    Result<ChildProcess> polite =
        ChildProcess::start(shell("trap 'exit 7' TERM; sleep 300 & echo $! > " + rank_file + "; wait"));
    ASSERT_TRUE(polite.ok());
    const pid_t left = pid_in(rank_file);
    ASSERT_GT(left, 0);
    EXPECT_EQ(polite->stop(5s).code, 7);  // asked, and it answered
    // What it left in its group was killed before it was reaped: nothing outlives it.
    EXPECT_TRUE(testing_util::wait_until([&] { return !alive(left); }, 5000));

    // Deaf to SIGTERM, with a rank that is deaf too: both killed after the grace.
    fs::remove(rank_file);
    Result<ChildProcess> deaf = ChildProcess::start(
        shell("trap '' TERM; sleep 300 & echo $! > " + rank_file + "; while :; do sleep 0.1; done"));
    ASSERT_TRUE(deaf.ok());
    const pid_t rank = pid_in(rank_file);
    ASSERT_GT(rank, 0);
    const auto asked = std::chrono::steady_clock::now();
    const ProcessExit killed = deaf->stop(300ms);
    EXPECT_GE(std::chrono::steady_clock::now() - asked, 300ms);
    EXPECT_EQ(killed.signal, SIGKILL);
    EXPECT_TRUE(testing_util::wait_until([&] { return !alive(rank); }, 5000));
}

TEST(ChildProcess, OneStillRunningWhenItsOwnerGoesIsStopped) {
    QTemporaryDir dir;
    const std::string pid_file = dir.filePath("pid").toStdString();
    pid_t pid = 0;
    {
        Result<ChildProcess> p = ChildProcess::start(shell("echo $$ > " + pid_file + "; exec sleep 300"));
        ASSERT_TRUE(p.ok());
        pid = pid_in(pid_file);
        ASSERT_EQ(pid, p->pid());
    }
    EXPECT_FALSE(alive(pid));
}

TEST(ChildProcess, LastLineOfAFileIsItsLastWords) {
    QTemporaryDir dir;
    const std::string log = dir.filePath("engine.log").toStdString();
    EXPECT_EQ(last_line_of(log), "");  // no file
    std::ofstream(log) << "step 1\nerror: out of memory\n\n  \n";
    EXPECT_EQ(last_line_of(log), "error: out of memory");
    std::ofstream(log) << std::string(10000, 'x') << "\n" << std::string(300, 'y');
    EXPECT_EQ(last_line_of(log, 240), std::string(240, 'y'));
}

// The executor over the real history, every write recorded; fake_engine.sh stands in for the engine.
class LocalExecutorTest : public RealStoreTest {
protected:
    void SetUp() override {
        RealStoreTest::SetUp();
        if (HasFatalFailure()) return;
        executor_ = std::make_unique<LocalExecutor>(
            *store_, LocalExecutor::Options{test_paths::source_dir(), dir_.filePath("runs").toStdString(),
                                            testing_util::fake_engine().toStdString()});
    }
    void TearDown() override { unsetenv("FAKE_ENGINE_MODE"); }

    Result<LocalJob> submit(const char* mode) {
        setenv("FAKE_ENGINE_MODE", mode, 1);
        return executor_->submit(testing_util::demo_config());
    }
    static LocalEnd wait_end(LocalJob& job) {
        std::optional<LocalEnd> end;
        testing_util::wait_until([&] { return (end = job.poll()).has_value(); }, 15000);
        return end.value_or(LocalEnd{RunState::kUnknown, {}, "did not end"});
    }
    StoredRun row(int64_t id) {
        Result<StoredRun> found = real_->find(std::to_string(id));
        return found.ok() ? *found : StoredRun{};
    }

    std::unique_ptr<LocalExecutor> executor_;
};

TEST_F(LocalExecutorTest, ARunWritesItsRowOncePerStateChange) {
    Result<LocalJob> job = submit("complete");
    ASSERT_TRUE(job.ok()) << job.error();
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"add running"}));  // started: with its pid, one write
    const StoredRun started = row(job->run().id);
    EXPECT_EQ(started.state, RunState::kRunning);
    EXPECT_EQ(started.cluster, kLocalCluster);
    EXPECT_EQ(started.job_id, std::to_string(job->pid()));
    EXPECT_EQ(started.log_path, job->plan().mllog_path);
    EXPECT_EQ(started.config_json, to_json(job->plan().config).dump(2));

    const LocalEnd end = wait_end(*job);
    EXPECT_EQ(end.state, RunState::kCompleted);
    EXPECT_EQ(end.detail, "");
    EXPECT_TRUE(job->poll().has_value());  // asked again: the same end, no second write
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"add running", "set_state completed"}));
    EXPECT_EQ(row(job->run().id).state, RunState::kCompleted);
    EXPECT_TRUE(fs::exists(job->plan().engine_log));
    EXPECT_NE(read_file(job->plan().mllog_path).find("run_stop"), std::string::npos);
}

TEST_F(LocalExecutorTest, AFailedEngineIsStoredWithItsExitAndItsLastWords) {
    Result<LocalJob> job = submit("fail");
    ASSERT_TRUE(job.ok()) << job.error();
    const LocalEnd end = wait_end(*job);
    EXPECT_EQ(end.state, RunState::kFailed);
    EXPECT_EQ(end.exit.code, 3);
    EXPECT_EQ(end.detail, "exit code 3: fake engine: failing on purpose");
    EXPECT_EQ(row(job->run().id).state_detail, end.detail);
    EXPECT_EQ(read_file(job->plan().engine_log), "fake engine: failing on purpose\n");
}

TEST_F(LocalExecutorTest, AnEngineThatCannotStartIsStoredFailedWithWhy) {
    // Executable, so the plan takes it; its interpreter does not exist, so exec fails.
    const std::string broken = dir_.filePath("broken-engine").toStdString();
    std::ofstream(broken) << "#!/nonexistent/interpreter\n";
    fs::permissions(broken, fs::perms::owner_all);
    LocalExecutor executor(*store_, {test_paths::source_dir(), dir_.filePath("runs").toStdString(), broken});
    Result<LocalJob> job = executor.submit(testing_util::demo_config());
    ASSERT_FALSE(job.ok());
    EXPECT_EQ(job.error(), "cannot start " + broken + ": No such file or directory");
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"add failed"}));
    Result<std::vector<StoredRun>> rows = history_->runs();
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ(rows->front().state, RunState::kFailed);
    EXPECT_EQ(rows->front().state_detail, job.error());
}

TEST_F(LocalExecutorTest, ACancelIsAskedThenEnforcedOnTheEngineAndItsRanks) {
    // Obeyed: the engine's own answer (run_stop aborted after its checkpoint), stored cancelled.
    Result<LocalJob> hang = submit("hang");
    ASSERT_TRUE(hang.ok()) << hang.error();
    ASSERT_TRUE(testing_util::wait_until([&] { return fs::exists(hang->plan().mllog_path); }, 15000));
    std::this_thread::sleep_for(200ms);  // past its first lines: its SIGTERM handler is set
    hang->cancel(10s);
    const LocalEnd obeyed = wait_end(*hang);
    EXPECT_EQ(obeyed.state, RunState::kCancelled);
    EXPECT_EQ(obeyed.exit.code, 143);
    EXPECT_NE(read_file(hang->plan().mllog_path).find("aborted"), std::string::npos);

    // Ignored: killed with its rank once the grace has passed.
    Result<LocalJob> deaf = submit("deaf");
    ASSERT_TRUE(deaf.ok()) << deaf.error();
    const pid_t rank = pid_in(deaf->plan().run_dir + "/rank.pid");
    ASSERT_GT(rank, 0);
    deaf->cancel(300ms);
    EXPECT_TRUE(deaf->cancel_asked());
    const LocalEnd enforced = wait_end(*deaf);
    EXPECT_EQ(enforced.state, RunState::kCancelled);
    EXPECT_EQ(enforced.exit.signal, SIGKILL);
    EXPECT_TRUE(testing_util::wait_until([&] { return !alive(rank); }, 5000));
    EXPECT_EQ(row(deaf->run().id).state, RunState::kCancelled);
}

TEST_F(LocalExecutorTest, InterruptStopsItNowAndSaysWhy) {
    Result<LocalJob> job = submit("hang");
    ASSERT_TRUE(job.ok()) << job.error();
    ASSERT_TRUE(testing_util::wait_until([&] { return fs::exists(job->plan().mllog_path); }, 15000));
    job->interrupt("slipway was closed while it ran", 5s);
    const std::optional<LocalEnd> end = job->wait(15s);
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->state, RunState::kInterrupted);
    EXPECT_FALSE(alive(job->pid()));
    const StoredRun stored = row(job->run().id);
    EXPECT_EQ(stored.state, RunState::kInterrupted);
    EXPECT_EQ(stored.state_detail, "slipway was closed while it ran");
    EXPECT_EQ(job->poll()->state, RunState::kInterrupted);
}

TEST_F(LocalExecutorTest, AStoreThatCannotTakeTheRowDoesNotStopTheRun) {
    store_->refuse = "add";
    Result<LocalJob> job = submit("complete");
    ASSERT_TRUE(job.ok()) << job.error();
    EXPECT_EQ(job->run().id, 0);
    EXPECT_EQ(job->store_problem(), "database or disk is full");
    EXPECT_EQ(wait_end(*job).state, RunState::kCompleted);
    EXPECT_EQ(store_->writes, (std::vector<std::string>{"add running"}));  // no row, so no end to write
}

TEST_F(LocalExecutorTest, AnotherDoorStopsARunOnlyThroughItsOwnEngine) {
    StoredRun elsewhere;
    elsewhere.name = "on a cluster";
    elsewhere.cluster = "hpc";
    elsewhere.job_id = "12";
    EXPECT_EQ(stop_local_run(elsewhere).message(),
              "run on a cluster is not a run on this computer with an engine");
    StoredRun not_a_pid = elsewhere;
    not_a_pid.cluster = kLocalCluster;
    not_a_pid.job_id = "12x";
    EXPECT_EQ(stop_local_run(not_a_pid).message(), "run on a cluster: \"12x\" is not a process id");
    // A pid that is alive but runs something else (this test): never signalled.
    StoredRun reused = not_a_pid;
    reused.job_id = std::to_string(::getpid());
    reused.log_path = "/tmp/some-run/output/mllog.txt";
    EXPECT_EQ(stop_local_run(reused).message(),
              "run on a cluster: process " + reused.job_id +
                  " is not its engine (it does not run /tmp/some-run/run.json)");

    // The run's own engine: asked to stop; its owner stores it cancelled, saying who stopped it.
    Result<LocalJob> job = submit("hang");
    ASSERT_TRUE(job.ok()) << job.error();
    ASSERT_TRUE(testing_util::wait_until([&] { return fs::exists(job->plan().mllog_path); }, 15000));
    std::this_thread::sleep_for(200ms);  // past its first lines: its SIGTERM handler is set
    ASSERT_TRUE(stop_local_run(row(job->run().id)).ok());
    const LocalEnd end = wait_end(*job);
    EXPECT_EQ(end.state, RunState::kCancelled);
    EXPECT_EQ(end.detail, "stopped by SIGTERM from another process");
    EXPECT_FALSE(stop_local_run(row(job->run().id)).ok());  // ended (or its number reused): not signalled

    // A pipeline's step that is not a training run: known by the folder it runs in, beside its engine.log.
    const std::string step_dir = dir_.filePath("steps/tok").toStdString();
    fs::create_directories(step_dir);
    ProcessSpec spec = shell("exec sleep 300", step_dir + "/engine.log");
    spec.working_dir = step_dir;
    Result<ChildProcess> step = ChildProcess::start(spec);
    ASSERT_TRUE(step.ok()) << step.error();
    StoredRun step_row;
    step_row.name = "pipeline.tok";
    step_row.cluster = kLocalCluster;
    step_row.job_id = std::to_string(step->pid());
    step_row.log_path = step_dir + "/engine.log";
    ASSERT_TRUE(testing_util::wait_until([&] { return check_local_engine(step_row).ok(); }, 15000));
    EXPECT_EQ(*check_local_engine(step_row), step->pid());
    StoredRun elsewhere_step = step_row;
    elsewhere_step.log_path = dir_.filePath("steps/other/engine.log").toStdString();
    EXPECT_FALSE(check_local_engine(elsewhere_step).ok());
    ASSERT_TRUE(stop_local_run(step_row).ok());
    EXPECT_EQ(step->wait_for(15s)->signal, SIGTERM);
}

// LocalJobs (service/local_jobs.h): the engines a window runs, polled together and closed together.
TEST_F(LocalExecutorTest, HeldEnginesEndOnceAndLeaveTheSet) {
    LocalJobs jobs;
    Result<LocalJob> done = submit("complete");
    ASSERT_TRUE(done.ok()) << done.error();
    Result<LocalJob> failing = submit("fail");
    ASSERT_TRUE(failing.ok()) << failing.error();
    const int64_t failing_row = failing->run().id;
    jobs.add(1, std::move(*done));
    jobs.add(2, std::move(*failing));
    EXPECT_EQ(jobs.key_of_run(failing_row), 2);
    EXPECT_EQ(jobs.key_of_run(failing_row + 100), 0);

    // Shown again under a new key: the same engine.
    EXPECT_FALSE(jobs.rekey(2, 1));  // 1 holds an engine
    EXPECT_TRUE(jobs.rekey(2, 5));
    EXPECT_FALSE(jobs.rekey(2, 6));  // nothing under 2 any more
    EXPECT_EQ(jobs.key_of_run(failing_row), 5);
    ASSERT_NE(jobs.find(5), nullptr);
    EXPECT_EQ(jobs.find(2), nullptr);

    std::vector<LocalJobs::Ended> ended;
    ASSERT_TRUE(testing_util::wait_until(
        [&] {
            for (LocalJobs::Ended& e : jobs.poll())
                ended.push_back(std::move(e));
            return ended.size() == 2;
        },
        15000));
    EXPECT_TRUE(jobs.empty());
    EXPECT_TRUE(jobs.poll().empty());  // each end once
    std::sort(ended.begin(), ended.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    EXPECT_EQ(ended[0].key, 1);
    EXPECT_EQ(ended[0].end.state, RunState::kCompleted);
    EXPECT_EQ(ended[1].key, 5);
    EXPECT_EQ(ended[1].end.state, RunState::kFailed);
    EXPECT_EQ(ended[1].end.detail, "exit code 3: fake engine: failing on purpose");
    EXPECT_EQ(row(failing_row).state, RunState::kFailed);  // stored by the job, not by the set's caller
}

TEST_F(LocalExecutorTest, ClosingStopsEveryHeldEngineTogetherAndTheirRowsSaySo) {
    Result<LocalJob> deaf = submit("deaf");  // ignores SIGTERM: killed with its rank after the grace
    ASSERT_TRUE(deaf.ok()) << deaf.error();
    Result<LocalJob> polite = submit("hang");
    ASSERT_TRUE(polite.ok()) << polite.error();
    Result<LocalJob> cancelled = submit("hang");
    ASSERT_TRUE(cancelled.ok()) << cancelled.error();
    Result<LocalJob> done = submit("complete");  // ended before the close, never polled: keeps its end
    ASSERT_TRUE(done.ok()) << done.error();
    ASSERT_TRUE(testing_util::wait_until([&] { return !alive(done->pid()); }, 15000));
    const pid_t rank = pid_in(deaf->plan().run_dir + "/rank.pid");
    ASSERT_GT(rank, 0);
    for (const LocalJob* job : {&*polite, &*cancelled})
        ASSERT_TRUE(testing_util::wait_until([&] { return fs::exists(job->plan().mllog_path); }, 15000));
    std::this_thread::sleep_for(200ms);  // past their first lines: their SIGTERM handlers are set
    cancelled->cancel(10s);              // a cancel under way stays a cancel
    const std::vector<int64_t> rows{deaf->run().id, polite->run().id, cancelled->run().id, done->run().id};
    const std::vector<pid_t> pids{deaf->pid(), polite->pid(), cancelled->pid()};

    LocalJobs jobs;
    jobs.add(1, std::move(*deaf));
    jobs.add(2, std::move(*polite));
    jobs.add(3, std::move(*cancelled));
    jobs.add(4, std::move(*done));
    // Still running when asked: the deaf and the polite one, and the cancelled one unless it obeyed already.
    const int running = jobs.close_all("the window was closed", 500ms);
    EXPECT_GE(running, 2);
    EXPECT_LE(running, 3);
    EXPECT_TRUE(jobs.empty());
    for (const pid_t pid : pids)
        EXPECT_FALSE(alive(pid)) << pid;
    EXPECT_TRUE(testing_util::wait_until([&] { return !alive(rank); }, 5000));
    EXPECT_EQ(row(rows[0]).state, RunState::kInterrupted);
    EXPECT_EQ(row(rows[0]).state_detail, "the window was closed");
    EXPECT_EQ(row(rows[1]).state, RunState::kInterrupted);
    EXPECT_EQ(row(rows[2]).state, RunState::kCancelled);
    EXPECT_EQ(row(rows[3]).state, RunState::kCompleted);
}

// The caller's own engine is its own run again when it is followed again (service/follow_again.h).
TEST_F(LocalExecutorTest, ItsOwnEngineIsFollowedAgainAsItsOwnRun) {
    Result<LocalJob> job = submit("hang");
    ASSERT_TRUE(job.ok()) << job.error();
    const StoredRun stored = row(job->run().id);
    const Result<FollowAgain> own = plan_follow_again(stored, &*job);
    ASSERT_TRUE(own.ok()) << own.error();
    EXPECT_EQ(own->followed_as, RunKind::kLocal);
    EXPECT_TRUE(own->live);
    EXPECT_TRUE(own->cancellable);
    EXPECT_FALSE(own->state_from_store);
    // The same row without its engine: another process's run, its row says its state.
    const Result<FollowAgain> elsewhere = plan_follow_again(stored, nullptr);
    ASSERT_TRUE(elsewhere.ok()) << elsewhere.error();
    EXPECT_TRUE(elsewhere->state_from_store);

    job->cancel(10s);
    const Result<FollowAgain> cancelling = plan_follow_again(stored, &*job);
    ASSERT_TRUE(cancelling.ok()) << cancelling.error();
    EXPECT_FALSE(cancelling->cancellable);  // a cancel is under way already
    EXPECT_EQ(wait_end(*job).state, RunState::kCancelled);
}

// Another process's local run whose engine is gone while its row is live (service/orphaned_run.h).
TEST_F(LocalExecutorTest, AnOrphanedRunIsTakenOverAtTheSecondCheckOnce) {
    Result<ChildProcess> gone = ChildProcess::start(shell("exit 0"));
    ASSERT_TRUE(gone.ok()) << gone.error();
    ASSERT_TRUE(gone->wait_for(10s).has_value());
    StoredRun orphan;
    orphan.name = "elsewhere";
    orphan.cluster = kLocalCluster;
    orphan.job_id = std::to_string(gone->pid());
    orphan.log_path = dir_.filePath("elsewhere/output/mllog.txt").toStdString();
    orphan.state = RunState::kRunning;

    OrphanedRunCheck check;
    EXPECT_FALSE(check.check(orphan, std::nullopt));  // its owner stores an end within a poll
    const std::optional<OrphanEnd> end = check.check(orphan, std::nullopt);
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->state, RunState::kInterrupted);
    EXPECT_EQ(end->detail, kOwnerEndedUnsaidDetail);
    EXPECT_FALSE(check.check(orphan, std::nullopt));  // once

    // Its log's run_stop says how it ended.
    OrphanedRunCheck stopped;
    EXPECT_FALSE(stopped.check(orphan, std::string("aborted")));
    const std::optional<OrphanEnd> aborted = stopped.check(orphan, std::string("aborted"));
    ASSERT_TRUE(aborted.has_value());
    EXPECT_EQ(aborted->state, RunState::kFailed);
    EXPECT_EQ(aborted->detail, "run_stop status aborted");

    // A row that ended between two checks starts the count again; so does an engine still running.
    OrphanedRunCheck interrupted_count;
    EXPECT_FALSE(interrupted_count.check(orphan, std::nullopt));
    StoredRun ended = orphan;
    ended.state = RunState::kCompleted;
    EXPECT_FALSE(interrupted_count.check(ended, std::nullopt));
    EXPECT_FALSE(interrupted_count.check(orphan, std::nullopt));
    Result<LocalJob> alive_job = submit("hang");
    ASSERT_TRUE(alive_job.ok()) << alive_job.error();
    ASSERT_TRUE(testing_util::wait_until([&] { return fs::exists(alive_job->plan().mllog_path); }, 15000));
    OrphanedRunCheck running;
    for (int i = 0; i < 3; ++i)
        EXPECT_FALSE(running.check(row(alive_job->run().id), std::nullopt));
    alive_job->cancel(10s);
    EXPECT_EQ(wait_end(*alive_job).state, RunState::kCancelled);
}

}  // namespace
}  // namespace slipway::app
