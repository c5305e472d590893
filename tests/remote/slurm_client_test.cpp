// Tests of SlurmClient over FakeSession: the commands it sends (quoted), job state through squeue ->
// scontrol -> sacct so a finished job is never reported failed or lost, and faults (timeouts, a dropped
// connection, non-zero exits whose stderr reaches the message).
#include <gtest/gtest.h>

#include "remote/slurm/slurm_client.h"
#include "remote/ssh/fake_session.h"

namespace slipway::remote {
namespace {

ExecResult ok(std::string out, std::string err = "") {
    return ExecResult{std::move(out), std::move(err), 0};
}
ExecResult fail(int code, std::string err) {
    return ExecResult{"", std::move(err), code};
}

TEST(SlurmClient, SubmitRunsSbatchParsableInTheQuotedRunFolder) {
    FakeSession session;
    session.queue_exec(ok("4242;cluster1\n"));
    SlurmClient client(session);
    Result<SubmittedJob> job = client.submit("/home/u/slipway work/runs/it's", "run.sbatch");
    ASSERT_TRUE(job.ok()) << job.error();
    EXPECT_EQ(job->job_id, "4242");
    EXPECT_EQ(job->cluster, "cluster1");
    ASSERT_EQ(session.commands().size(), 1u);
    EXPECT_EQ(session.commands()[0],
              "cd '/home/u/slipway work/runs/it'\\''s' && sbatch --parsable run.sbatch");
}

TEST(SlurmClient, SubmitRefusalCarriesSbatchStderr) {
    FakeSession session;
    session.queue_exec(fail(1, "sbatch: error: invalid partition specified: gpux\n"));
    SlurmClient client(session);
    Result<SubmittedJob> job = client.submit("/r", "run.sbatch");
    ASSERT_FALSE(job.ok());
    EXPECT_NE(job.error().find("invalid partition specified: gpux"), std::string::npos);
    EXPECT_NE(job.error().find("exited 1"), std::string::npos);
    EXPECT_NE(job.error().find(session.describe()), std::string::npos);
}

TEST(SlurmClient, TestOnlyReturnsSlurmsEstimate) {
    FakeSession session;
    session.queue_exec(ok("",
                          "sbatch: Job 7 to start at 2026-11-22T09:00:00 using 2 processors on nodes "
                          "localhost in partition debug\n"));
    SlurmClient client(session);
    Result<std::string> answer = client.test_only("/r", "run.sbatch");
    ASSERT_TRUE(answer.ok()) << answer.error();
    EXPECT_NE(answer->find("to start at"), std::string::npos);
    EXPECT_EQ(session.commands()[0], "cd /r && sbatch --test-only run.sbatch");
}

TEST(SlurmClient, RunningJobFromSqueue) {
    FakeSession session;
    session.queue_exec(ok("42|RUNNING|None|0:12|1|localhost\n"));
    SlurmClient client(session);
    Result<JobInfo> info = client.job("42");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->state, "RUNNING");
    EXPECT_EQ(info->source, "squeue");
    EXPECT_EQ(session.commands()[0], "squeue -h -t all -j 42 -o '%i|%T|%r|%M|%D|%R'");
    EXPECT_EQ(session.commands().size(), 1u);
}

TEST(SlurmClient, JobThatLeftTheQueueFromScontrol) {
    FakeSession session;
    session.queue_exec(fail(1, "slurm_load_jobs error: Invalid job id specified\n"));
    session.queue_exec(ok("JobId=42 JobName=x\n   JobState=COMPLETED Reason=None\n   ExitCode=0:0\n"));
    SlurmClient client(session);
    Result<JobInfo> info = client.job("42");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->state, "COMPLETED");
    EXPECT_EQ(info->source, "scontrol");
    EXPECT_EQ(session.commands()[1], "scontrol show job 42");
}

TEST(SlurmClient, FinishedInSqueueIsConfirmedByScontrolForItsExitCode) {
    FakeSession session;
    session.queue_exec(ok("42|FAILED|NonZeroExitCode|0:03|1|localhost\n"));
    session.queue_exec(
        ok("JobId=42 JobName=x\n   JobState=FAILED Reason=NonZeroExitCode\n   ExitCode=3:0\n"));
    SlurmClient client(session);
    Result<JobInfo> info = client.job("42");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->state, "FAILED");
    EXPECT_EQ(info->exit_code, "3:0");
}

TEST(SlurmClient, FinishedInSqueueThenPurgedKeepsSqueuesAnswer) {
    FakeSession session;
    session.queue_exec(ok("42|COMPLETED|None|0:03|1|localhost\n"));
    session.queue_exec(fail(1, "slurm_load_jobs error: Invalid job id specified\n"));
    session.queue_exec(fail(1, "Slurm accounting storage is disabled\n"));
    SlurmClient client(session);
    Result<JobInfo> info = client.job("42");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->state, "COMPLETED");
    EXPECT_EQ(info->source, "squeue");
}

TEST(SlurmClient, PurgedJobFromSacct) {
    FakeSession session;
    session.queue_exec(fail(1, "slurm_load_jobs error: Invalid job id specified\n"));
    session.queue_exec(fail(1, "slurm_load_jobs error: Invalid job id specified\n"));
    session.queue_exec(ok("42|x|COMPLETED|0:0|00:10:00|gpu01\n"));
    SlurmClient client(session);
    Result<JobInfo> info = client.job("42");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->state, "COMPLETED");
    EXPECT_EQ(info->source, "sacct");
    EXPECT_EQ(session.commands()[2], "sacct -n -P -X -j 42 -o JobID,JobName,State,ExitCode,Elapsed,NodeList");
}

TEST(SlurmClient, NoSourceKnowsTheJobIsUnknownNeverFailed) {
    FakeSession session;
    session.queue_exec(fail(1, "slurm_load_jobs error: Invalid job id specified\n"));
    session.queue_exec(fail(1, "slurm_load_jobs error: Invalid job id specified\n"));
    session.queue_exec(
        fail(1, "Slurm accounting storage is disabled\n"));  // as the local test cluster answers
    SlurmClient client(session);
    Result<JobInfo> info = client.job("42");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->state, "UNKNOWN");
    EXPECT_EQ(info->source, "none");
}

// A watcher's poll: one squeue for every job; a job squeue shows finished is confirmed by scontrol, one it
// no longer knows goes on to scontrol and sacct, each alone; the answers come in the order asked.
TEST(SlurmClient, SeveralJobsAreAskedWithOneSqueue) {
    FakeSession session;
    session.queue_exec(
        ok("41|RUNNING|None|0:12|2|node[1-2]\n43|PENDING|Priority|0:00|1|(Priority)\n"
           "44|COMPLETED|None|0:30|1|node1\n"));
    session.queue_exec(fail(1, "slurm_load_jobs error: Invalid job id specified\n"));  // scontrol of 42
    session.queue_exec(fail(1, "Slurm accounting storage is disabled\n"));             // sacct of 42
    session.queue_exec(ok("JobId=44 JobName=x\n   JobState=COMPLETED Reason=None\n   ExitCode=0:0\n"));
    SlurmClient client(session);
    Result<std::vector<JobInfo>> jobs = client.jobs({"43", "41", "42", "44"});
    ASSERT_TRUE(jobs.ok()) << jobs.error();
    ASSERT_EQ(jobs->size(), 4u);
    EXPECT_EQ((*jobs)[0].job_id, "43");
    EXPECT_EQ((*jobs)[0].state, "PENDING");
    EXPECT_EQ((*jobs)[1].state, "RUNNING");
    EXPECT_EQ((*jobs)[1].node_list, "node[1-2]");
    EXPECT_EQ((*jobs)[2].job_id, "42");
    EXPECT_EQ((*jobs)[2].state, "UNKNOWN");
    EXPECT_EQ((*jobs)[3].state, "COMPLETED");
    EXPECT_EQ((*jobs)[3].source, "scontrol");
    const std::vector<std::string> expected = {
        "squeue -h -t all -j 43,41,42,44 -o '%i|%T|%r|%M|%D|%R'", "scontrol show job 42",
        "sacct -n -P -X -j 42 -o JobID,JobName,State,ExitCode,Elapsed,NodeList", "scontrol show job 44"};
    EXPECT_EQ(session.commands(), expected);

    // One bad id refuses the whole call before anything runs; a failed squeue is an error, not states.
    FakeSession refused;
    EXPECT_FALSE(SlurmClient(refused).jobs({"41", "42; rm -rf ~"}).ok());
    EXPECT_TRUE(refused.commands().empty());
    refused.queue_exec(fail(1, "squeue: error: Unable to contact slurm controller\n"));
    const Result<std::vector<JobInfo>> down = SlurmClient(refused).jobs({"41", "42"});
    ASSERT_FALSE(down.ok());
    EXPECT_NE(down.error().find("Unable to contact slurm controller"), std::string::npos) << down.error();
}

TEST(SlurmClient, TimeoutAndDroppedConnectionAreErrorsNotStates) {
    FakeSession session;
    session.fail_next(FakeFault::kTimeout);
    SlurmClient client(session);
    Result<JobInfo> info = client.job("42");
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.code(), StatusCode::kTimeout);
    EXPECT_NE(info.error().find("squeue"), std::string::npos);

    session.queue_exec(fail(1, "slurm_load_jobs error: Invalid job id specified\n"));
    session.drop_connection();
    info = client.job("42");
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.code(), StatusCode::kUnavailable);
    ASSERT_TRUE(session.reconnect().ok());
}

TEST(SlurmClient, CancelAndBadJobIds) {
    FakeSession session;
    session.queue_exec(ok(""));
    session.queue_exec(fail(1, "scancel: error: Kill job error on job id 43: Invalid job id specified\n"));
    SlurmClient client(session);
    EXPECT_TRUE(client.cancel("42").ok());
    EXPECT_EQ(session.commands()[0], "scancel 42");
    Status s = client.cancel("43");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("Invalid job id"), std::string::npos);
    EXPECT_FALSE(client.cancel("42; reboot").ok());
    EXPECT_FALSE(client.job("$(id)").ok());
    EXPECT_EQ(session.commands().size(), 2u);  // refused ids never reached a command line
}

TEST(SlurmClient, NodesFromSinfo) {
    FakeSession session;
    session.queue_exec(ok("localhost|debug*|idle|2|1000|(null)\n"));
    SlurmClient client(session);
    Result<std::vector<NodeRow>> nodes = client.nodes();
    ASSERT_TRUE(nodes.ok()) << nodes.error();
    ASSERT_EQ(nodes->size(), 1u);
    EXPECT_EQ((*nodes)[0].partition, "debug");
    EXPECT_EQ((*nodes)[0].cpus, 2);
    EXPECT_EQ(session.commands()[0], "sinfo -h -N -o '%N|%P|%T|%c|%m|%G'");
}

}  // namespace
}  // namespace slipway::remote
