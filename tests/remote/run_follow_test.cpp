// Tests of follow_run over FakeSession: a job seen PENDING -> RUNNING -> COMPLETED while its log grows,
// every line delivered once; an outage longer than the follower's own reconnects is ridden out with
// backoff; one longer than the limit is an error; the outcome's success rule; a job that looks ended for a
// moment while it is requeued (after its time limit, or on a preemption) is followed into its next run.
#include <gtest/gtest.h>

#include "remote/deploy/run_follow.h"
#include "remote/slurm/sbatch_script.h"
#include "remote/ssh/fake_session.h"

namespace slipway::remote {
namespace {

constexpr const char* kLog = "/home/u/slipway/runs/r1/slurm-42.out";

RunRecord record() {
    RunRecord r;
    r.run_id = "r1-20261122-090000-0001";
    r.cluster = "local-test";
    r.job_id = "42";
    r.remote_dir = "/home/u/slipway/runs/r1";
    return r;
}

std::string mllog(const std::string& key, double value, int step) {
    return "0: :::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", \"key\": "
           "\"" +
           key + "\", \"value\": " + std::to_string(value) +
           ", \"metadata\": {\"step_num\": " + std::to_string(step) + "}}\n";
}

// A job that is PENDING for one query, then RUNNING while it writes `steps` log lines (one per query),
// then ends in `final_state`; scontrol answers once it left the queue.
struct ScriptedJob {
    explicit ScriptedJob(FakeSession& s) : session(s) {}
    FakeSession& session;
    int steps = 10;
    std::string final_state = "COMPLETED";
    bool write_run_stop = true;
    int queries = 0;
    std::vector<std::string> written;

    Result<ExecResult> operator()(const std::string& command) {
        if (command.rfind("squeue", 0) == 0) {
            ++queries;
            if (queries == 1) return ExecResult{"42|PENDING|Resources|0:00|1|(Resources)\n", "", 0};
            const int step = queries - 1;
            if (step <= steps) {
                const std::string line = step % 5 == 0 ? mllog("eval_accuracy", 1.0 / step, step)
                                                       : mllog("train_loss", 2.0 / step, step);
                if (step == 1) {
                    session.put_file(kLog, "slipway: job 42\n" + line);
                } else {
                    session.append_file(kLog, line);
                }
                written.push_back(line.substr(0, line.size() - 1));
                return ExecResult{"42|RUNNING|None|0:0" + std::to_string(step % 10) + "|1|localhost\n", "",
                                  0};
            }
            if (write_run_stop) {
                const std::string stop =
                    "0: :::MLLOG {\"key\": \"run_stop\", \"metadata\": {\"status\": \"success\"}}";
                session.append_file(kLog, stop + "\n");
                written.push_back(stop);
                write_run_stop = false;
            }
            return ExecResult{"", "slurm_load_jobs error: Invalid job id specified\n", 1};
        }
        if (command.rfind("scontrol", 0) == 0) {
            if (final_state == "GONE")
                return ExecResult{"", "slurm_load_jobs error: Invalid job id specified\n", 1};
            return ExecResult{
                "JobId=42 JobName=r1\n   JobState=" + final_state + " Reason=None\n   ExitCode=0:0\n", "", 0};
        }
        if (command.rfind("sacct", 0) == 0)
            return ExecResult{"", "Slurm accounting storage is disabled\n", 1};
        return Status::Error("unexpected command " + command);
    }
};

struct Seen {
    std::vector<std::string> lines;
    std::vector<std::string> states;
    std::vector<std::string> notices;
    std::chrono::milliseconds slept{0};
};

RunFollowOptions options_for(Seen& seen) {
    RunFollowOptions o;
    o.interval = std::chrono::milliseconds(1000);
    o.outage_limit = std::chrono::seconds(60);
    o.sleep = [&seen](std::chrono::milliseconds d) { seen.slept += d; };
    return o;
}

RunFollowCallbacks callbacks_for(Seen& seen) {
    RunFollowCallbacks c;
    c.on_line = [&seen](MllogStreamItem&& item) { seen.lines.push_back(item.text); };
    c.on_state = [&seen](const JobInfo& job) { seen.states.push_back(job.state); };
    c.on_notice = [&seen](const std::string& n) { seen.notices.push_back(n); };
    return c;
}

TEST(RunFollow, PendingRunningCompletedEveryLineOnce) {
    FakeSession session;
    ScriptedJob job(session);
    session.set_exec_handler([&job](const std::string& c) { return job(c); });
    SlurmClient slurm(session);
    Seen seen;
    Result<RunFollowOutcome> outcome =
        follow_run(session, slurm, record(), options_for(seen), callbacks_for(seen));
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->job.state, "COMPLETED");
    EXPECT_EQ(outcome->run_stop_status, "success");
    EXPECT_TRUE(outcome->success());
    EXPECT_EQ(seen.states, (std::vector<std::string>{"PENDING", "RUNNING", "COMPLETED"}));
    std::vector<std::string> expected = {"slipway: job 42"};
    expected.insert(expected.end(), job.written.begin(), job.written.end());
    EXPECT_EQ(seen.lines, expected);
}

TEST(RunFollow, RidesOutAnOutageWithBackoffAndLosesNoLine) {
    FakeSession session;
    ScriptedJob job(session);
    job.steps = 20;
    session.set_exec_handler([&job, &session](const std::string& c) {
        Result<ExecResult> r = job(c);
        // Mid-run, the login node goes away for 12 calls: more than the log follower's own 3 reconnects.
        if (job.queries == 8 && c.rfind("squeue", 0) == 0) session.fail_next(FakeFault::kDropConnection, 12);
        return r;
    });
    SlurmClient slurm(session);
    Seen seen;
    Result<RunFollowOutcome> outcome =
        follow_run(session, slurm, record(), options_for(seen), callbacks_for(seen));
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_TRUE(outcome->success());
    EXPECT_GT(outcome->reconnects, 0);
    EXPECT_FALSE(seen.notices.empty());
    std::vector<std::string> expected = {"slipway: job 42"};
    expected.insert(expected.end(), job.written.begin(), job.written.end());
    EXPECT_EQ(seen.lines, expected);
}

TEST(RunFollow, GivesUpAfterTheOutageLimit) {
    FakeSession session;
    ScriptedJob job(session);
    session.set_exec_handler([&job, &session](const std::string& c) {
        Result<ExecResult> r = job(c);
        if (job.queries == 3) session.fail_next(FakeFault::kDropConnection, 1000000);
        return r;
    });
    SlurmClient slurm(session);
    Seen seen;
    RunFollowOptions options = options_for(seen);
    options.outage_limit = std::chrono::seconds(20);
    Result<RunFollowOutcome> outcome = follow_run(session, slurm, record(), options, callbacks_for(seen));
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.code(), StatusCode::kUnavailable);
    EXPECT_NE(outcome.error().find("gave up after 20 s"), std::string::npos) << outcome.error();
    EXPECT_LT(seen.slept, std::chrono::seconds(20 + 30 + 10));  // backoff is capped at 30 s per wait
}

TEST(RunFollow, OtherErrorsEndAtOnce) {
    FakeSession session;
    session.set_exec_handler(
        [](const std::string&) { return Result<ExecResult>(Status::Error("permission denied")); });
    SlurmClient slurm(session);
    Seen seen;
    Result<RunFollowOutcome> outcome =
        follow_run(session, slurm, record(), options_for(seen), callbacks_for(seen));
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().find("permission denied"), std::string::npos);
    EXPECT_EQ(seen.slept.count(), 0);
}

TEST(RunFollow, SuccessRule) {
    RunFollowOutcome o;
    o.job.state = "COMPLETED";
    EXPECT_TRUE(o.success());
    o.job.state = "FAILED";
    o.run_stop_status = "success";
    EXPECT_FALSE(o.success());
    o.job.state = "UNKNOWN";
    EXPECT_TRUE(o.success());  // Slurm forgot the job, the log says it finished well
    o.run_stop_status = "aborted";
    EXPECT_FALSE(o.success());
    o.run_stop_status.clear();
    EXPECT_FALSE(o.success());
}

TEST(RunFollow, JobSlurmForgotEndsWithTheLogsVerdict) {
    FakeSession session;
    ScriptedJob job(session);
    job.steps = 3;
    job.final_state = "GONE";
    session.set_exec_handler([&job](const std::string& c) { return job(c); });
    SlurmClient slurm(session);
    Seen seen;
    Result<RunFollowOutcome> outcome =
        follow_run(session, slurm, record(), options_for(seen), callbacks_for(seen));
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->job.state, "UNKNOWN");
    EXPECT_EQ(outcome->run_stop_status, "success");
    EXPECT_TRUE(outcome->success());
}

// A job whose Slurm state follows a script, one entry per query (the last one repeats), each entry with the
// log line the job wrote before it; scontrol repeats squeue's state once squeue lists the job as ended.
struct StateScript {
    explicit StateScript(FakeSession& s) : session(s) {}
    FakeSession& session;
    std::vector<std::pair<std::string, std::string>> script;  // {state, line written before it}
    size_t queries = 0;
    std::string state;
    std::string node_list = "localhost";     // while RUNNING
    std::vector<std::string> sinfo_answers;  // in turn (the last one repeats); empty: sinfo is unexpected
    std::vector<size_t> sinfo_at;            // the squeue count when each sinfo came

    Result<ExecResult> operator()(const std::string& command) {
        if (command.rfind("squeue", 0) == 0) {
            const auto& [next, line] = script[std::min(queries, script.size() - 1)];
            if (queries < script.size() && !line.empty())
                session.append_file(kLog, line.back() == '\n' ? line : line + "\n");
            ++queries;
            state = next;
            const std::string nodes = state == "RUNNING" ? node_list : "localhost";
            return ExecResult{"42|" + state + "|None|0:01|2|" + nodes + "\n", "", 0};
        }
        if (command.rfind("sinfo", 0) == 0 && !sinfo_answers.empty()) {
            const std::string& answer = sinfo_answers[std::min(sinfo_at.size(), sinfo_answers.size() - 1)];
            sinfo_at.push_back(queries);
            return ExecResult{answer, "", 0};
        }
        if (command.rfind("scontrol", 0) == 0)
            return ExecResult{"JobId=42 JobName=r1\n   JobState=" + state + " Reason=None\n   ExitCode=0:0\n",
                              "", 0};
        return Status::Error("unexpected command " + command);
    }
};

Result<RunFollowOutcome> follow_script(StateScript& job, const RunFollowOptions& options,
                                       const RunFollowCallbacks& callbacks) {
    job.session.put_file(kLog, "slipway: job 42\n");
    job.session.set_exec_handler([&job](const std::string& c) { return job(c); });
    SlurmClient slurm(job.session);
    return follow_run(job.session, slurm, record(), options, callbacks);
}

Result<RunFollowOutcome> follow_script(StateScript& job, Seen& seen, const RunFollowOptions& options) {
    return follow_script(job, options, callbacks_for(seen));
}

// The script's own requeue after the time limit: the log says so, the job looks FAILED for a while
// (longer than a plain end takes to count), then it is PENDING, runs again and completes.
TEST(RunFollow, FollowsARequeuedJobIntoItsNextRun) {
    FakeSession session;
    StateScript job(session);
    const std::string announced = std::string(kRequeueAnnouncement) + "42 (restart 1 of at most 2)";
    job.script = {
        {"RUNNING", mllog("train_loss", 2.0, 1)},
        {"RUNNING", announced},
        {"FAILED", ""},
        {"FAILED", ""},
        {"FAILED", ""},
        {"FAILED", ""},
        {"FAILED", ""},
        {"FAILED", ""},
        {"FAILED", ""},
        {"FAILED", ""},  // 8 s: past end_settle
        {"PENDING", ""},
        {"RUNNING", "slipway: restart 1 of job 42: resuming from the newest checkpoint"},
        {"RUNNING", mllog("train_loss", 1.0, 2)},
        {"COMPLETED", "0: :::MLLOG {\"key\": \"run_stop\", \"metadata\": {\"status\": \"success\"}}"}};
    Seen seen;
    Result<RunFollowOutcome> outcome = follow_script(job, seen, options_for(seen));
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->job.state, "COMPLETED");
    EXPECT_TRUE(outcome->success());
    EXPECT_EQ(seen.states,
              (std::vector<std::string>{"RUNNING", "FAILED", "PENDING", "RUNNING", "COMPLETED"}));
    EXPECT_EQ(seen.lines.size(), 6u);  // the first line and every scripted one, once
    ASSERT_FALSE(seen.notices.empty());
    EXPECT_NE(seen.notices.back().find("PENDING again (requeued)"), std::string::npos) << seen.notices.back();
}

// Without an announcement (Slurm requeueing a preempted job) an end seen for a moment is not the run's.
TEST(RunFollow, OnePollsEndIsConfirmedBeforeItCounts) {
    FakeSession session;
    StateScript job(session);
    job.script = {{"RUNNING", ""}, {"PREEMPTED", ""}, {"PENDING", ""}, {"RUNNING", ""}, {"COMPLETED", ""}};
    Seen seen;
    Result<RunFollowOutcome> outcome = follow_script(job, seen, options_for(seen));
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->job.state, "COMPLETED");
    EXPECT_EQ(job.queries, 10u);  // COMPLETED from the 5th query, counted once seen for 5 s (1 s polls)
}

// An announced requeue that never happens (refused, or the job cancelled meanwhile): the end counts after
// requeue_wait.
TEST(RunFollow, AnAnnouncedRequeueThatNeverComesEndsAfterTheWait) {
    FakeSession session;
    StateScript job(session);
    job.script = {{"RUNNING", std::string(kRequeueAnnouncement) + "42 (restart 1 of at most 1)"},
                  {"CANCELLED", ""}};
    Seen seen;
    RunFollowOptions options = options_for(seen);
    options.end_rule.requeue_wait = std::chrono::seconds(10);
    Result<RunFollowOutcome> outcome = follow_script(job, seen, options);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->job.state, "CANCELLED");
    EXPECT_FALSE(outcome->success());
    EXPECT_GE(seen.slept, std::chrono::seconds(10));
    EXPECT_LE(seen.slept, std::chrono::seconds(12));
}

// A job on two nodes: their Slurm states are asked when it first runs, then every node_interval, and
// reported when they change (node2 stops answering: "allocated*"); a job on one node, or one not running,
// is never asked about; a failed sinfo is said once and the watch goes on.
TEST(RunFollow, TheStatesOfAJobsNodesAreReportedWhenTheyChange) {
    FakeSession session;
    StateScript job(session);
    job.node_list = "node[1-2]";
    job.script = {{"PENDING", ""}};
    for (int i = 0; i < 12; ++i)
        job.script.push_back({"RUNNING", ""});
    job.script.push_back({"COMPLETED", ""});
    job.sinfo_answers = {"node1|debug*|allocated|2|1000|(null)\nnode2|debug*|allocated|2|1000|(null)\n",
                         "node1|debug*|allocated|2|1000|(null)\nnode2|debug*|allocated|2|1000|(null)\n",
                         "node1|debug*|allocated|2|1000|(null)\nnode2|debug*|allocated*|2|1000|(null)\n"};
    Seen seen;
    std::vector<std::vector<NodeState>> reported;
    RunFollowCallbacks callbacks = callbacks_for(seen);
    callbacks.on_nodes = [&reported](const std::vector<NodeState>& nodes) { reported.push_back(nodes); };
    RunFollowOptions options = options_for(seen);
    options.node_interval = std::chrono::seconds(4);
    Result<RunFollowOutcome> outcome = follow_script(job, options, callbacks);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_TRUE(outcome->success());
    // Running from the 2nd query to the 13th (1 s polls): sinfo at its first, then 4 s apart.
    EXPECT_EQ(job.sinfo_at, (std::vector<size_t>{2, 6, 10}));
    ASSERT_EQ(reported.size(), 2u);  // the first answer, and node2's change; not the same answer again
    EXPECT_EQ(reported[0], (std::vector<NodeState>{{"node1", "allocated"}, {"node2", "allocated"}}));
    EXPECT_EQ(reported[1], (std::vector<NodeState>{{"node1", "allocated"}, {"node2", "allocated*"}}));

    // One node: no sinfo at all (an unexpected command would end the follow with an error).
    FakeSession one_node_session;
    StateScript one_node(one_node_session);
    one_node.node_list = "node1";
    one_node.script = {{"RUNNING", ""}, {"RUNNING", ""}, {"COMPLETED", ""}};
    Seen one_node_seen;
    outcome = follow_script(one_node, options_for(one_node_seen), callbacks);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(reported.size(), 2u);

    // sinfo fails: said once, and the job is followed to its end.
    FakeSession failing_session;
    StateScript failing(failing_session);
    failing.node_list = "node[1-2]";
    failing.script = job.script;
    failing.sinfo_answers = {};
    failing_session.set_exec_handler([&failing](const std::string& c) -> Result<ExecResult> {
        if (c.rfind("sinfo", 0) == 0)
            return ExecResult{"", "sinfo: error: Unable to contact slurm controller", 1};
        return failing(c);
    });
    Seen failing_seen;
    failing_session.put_file(kLog, "slipway: job 42\n");
    SlurmClient slurm(failing_session);
    RunFollowCallbacks failing_callbacks = callbacks_for(failing_seen);
    failing_callbacks.on_nodes = callbacks.on_nodes;
    outcome = follow_run(failing_session, slurm, record(), options, failing_callbacks);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_TRUE(outcome->success());
    ASSERT_EQ(failing_seen.notices.size(), 1u);
    EXPECT_NE(failing_seen.notices[0].find("the states of nodes node[1-2]: "), std::string::npos);
    EXPECT_NE(failing_seen.notices[0].find("Unable to contact slurm controller"), std::string::npos);
    EXPECT_EQ(reported.size(), 2u);
}

}  // namespace
}  // namespace slipway::remote
