// SlurmClient and deploy_run against the real local cluster (tests/cluster fixture, label cluster): sinfo,
// sbatch --test-only / --parsable, a job's state from squeue while queued or running and from scontrol
// once it ended (COMPLETED, FAILED with its exit code, CANCELLED), UNKNOWN (never FAILED) for a job Slurm
// does not know, and the rendered sbatch script run by real sbatch/srun with a stand-in engine that
// records how it was started (prepare once, then train on every task with the rendezvous variables).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "remote/deploy/deploy.h"
#include "remote/slurm/slurm_client.h"
#include "remote/ssh/libssh_session.h"
#include "ssh_cluster_env.h"
#include "test_paths.h"

namespace slipway::remote {
namespace {

using std::chrono::milliseconds;
using testing::ClusterEnv;

struct Cluster {
    ClusterEnv env;
    std::unique_ptr<Session> session;
    std::string dir;  // a fresh folder the test user owns
};

std::optional<Cluster> connect_cluster(const std::string& name) {
    std::optional<ClusterEnv> env = ClusterEnv::load();
    if (!env) return std::nullopt;
    Result<std::unique_ptr<Session>> session = connect_ssh(env->connect_options());
    EXPECT_TRUE(session.ok()) << session.error();
    if (!session.ok()) return std::nullopt;
    Cluster c{*env, std::move(*session),
              (*env)["SLIPWAY_REMOTE_DIR"] + "/" + name + "-" + std::to_string(::getpid())};
    EXPECT_TRUE(c.session->mkdir_p(c.dir).ok());
    return c;
}

#define SLIPWAY_CLUSTER_OR_SKIP(var, name)              \
    std::optional<Cluster> var = connect_cluster(name); \
    if (!var) GTEST_SKIP() << "SLIPWAY_CLUSTER_ENV is not set: run through ctest (local_cluster)"

// Polls until the job reaches a terminal state (or `seconds` pass); returns every state seen, in order.
std::vector<JobInfo> wait_for_end(SlurmClient& slurm, const std::string& job_id, int seconds) {
    std::vector<JobInfo> seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
        Result<JobInfo> info = slurm.job(job_id);
        EXPECT_TRUE(info.ok()) << info.error();
        if (!info.ok()) break;
        if (seen.empty() || seen.back().state != info->state) seen.push_back(*info);
        if (is_terminal_state(info->state)) break;
        std::this_thread::sleep_for(milliseconds(200));
    }
    return seen;
}

std::string submit_script(Cluster& c, SlurmClient& slurm, const std::string& name, const std::string& body) {
    const std::string script = "#!/bin/bash\n#SBATCH --output=slurm-%j.out\n#SBATCH --time=2\n" + body;
    EXPECT_TRUE(c.session->upload_bytes(script, c.dir + "/" + name, 0755).ok());
    Result<std::string> test_only = slurm.test_only(c.dir, name);
    EXPECT_TRUE(test_only.ok()) << test_only.error();
    if (test_only.ok()) {
        EXPECT_NE(test_only->find("to start at"), std::string::npos) << *test_only;
    }
    Result<SubmittedJob> job = slurm.submit(c.dir, name);
    EXPECT_TRUE(job.ok()) << job.error();
    return job.ok() ? job->job_id : "";
}

TEST(SlurmCluster, NodesAndPartitionsFromSinfo) {
    SLIPWAY_CLUSTER_OR_SKIP(c, "sinfo");
    SlurmClient slurm(*c->session);
    Result<std::vector<NodeRow>> nodes = slurm.nodes();
    ASSERT_TRUE(nodes.ok()) << nodes.error();
    ASSERT_EQ(nodes->size(), 1u);
    EXPECT_EQ((*nodes)[0].node, c->env["SLIPWAY_SLURM_NODE"]);
    EXPECT_EQ((*nodes)[0].partition, c->env["SLIPWAY_SLURM_PARTITION"]);
    EXPECT_TRUE((*nodes)[0].default_partition);
    EXPECT_EQ((*nodes)[0].cpus, std::stoll(c->env["SLIPWAY_SLURM_CPUS"]));
    EXPECT_EQ((*nodes)[0].gpus, 0);
}

TEST(SlurmCluster, CompletedFailedAndCancelledJobsKeepTheirStateAfterTheQueue) {
    SLIPWAY_CLUSTER_OR_SKIP(c, "states");
    SlurmClient slurm(*c->session);
    const std::string ok = submit_script(*c, slurm, "ok.sbatch", "echo hello\nsleep 1\n");
    const std::string bad = submit_script(*c, slurm, "bad.sbatch", "exit 3\n");
    const std::string sleeper = submit_script(*c, slurm, "sleeper.sbatch", "sleep 100\n");
    ASSERT_FALSE(ok.empty());

    std::vector<JobInfo> ok_states = wait_for_end(slurm, ok, 60);
    ASSERT_FALSE(ok_states.empty());
    EXPECT_EQ(ok_states.back().state, "COMPLETED");
    EXPECT_EQ(ok_states.back().exit_code, "0:0");
    EXPECT_EQ(ok_states.back().source, "scontrol");
    EXPECT_EQ(ok_states.front().source, "squeue");  // queued or running: squeue knew it

    std::vector<JobInfo> bad_states = wait_for_end(slurm, bad, 60);
    ASSERT_FALSE(bad_states.empty());
    EXPECT_EQ(bad_states.back().state, "FAILED");
    EXPECT_EQ(bad_states.back().exit_code, "3:0");

    for (int i = 0; i < 100; ++i) {  // cancel it while it runs
        Result<JobInfo> info = slurm.job(sleeper);
        if (info.ok() && info->state == "RUNNING") break;
        std::this_thread::sleep_for(milliseconds(100));
    }
    ASSERT_TRUE(slurm.cancel(sleeper).ok());
    std::vector<JobInfo> cancelled = wait_for_end(slurm, sleeper, 60);
    ASSERT_FALSE(cancelled.empty());
    EXPECT_EQ(cancelled.back().state, "CANCELLED");

    // The same jobs asked together, as a watcher does (one squeue for all), and one Slurm never had.
    Result<std::vector<JobInfo>> together = slurm.jobs({sleeper, "987654", bad, ok});
    ASSERT_TRUE(together.ok()) << together.error();
    ASSERT_EQ(together->size(), 4u);
    EXPECT_EQ((*together)[0].state, "CANCELLED");
    EXPECT_EQ((*together)[1].state, "UNKNOWN");
    EXPECT_EQ((*together)[2].state, "FAILED");
    EXPECT_EQ((*together)[2].exit_code, "3:0");
    EXPECT_EQ((*together)[3].state, "COMPLETED");

    Result<std::string> log = c->session->read_range(c->dir + "/slurm-" + ok + ".out", 0, 100);
    ASSERT_TRUE(log.ok()) << log.error();
    EXPECT_EQ(*log, "hello\n");
}

TEST(SlurmCluster, JobSlurmDoesNotKnowIsUnknownNotFailed) {
    SLIPWAY_CLUSTER_OR_SKIP(c, "unknown");
    SlurmClient slurm(*c->session);
    Result<JobInfo> info = slurm.job("987654");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->state, "UNKNOWN");
    EXPECT_EQ(info->source, "none");
    Status refused = slurm.submit(c->dir, "missing.sbatch").status();
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.message().find("missing.sbatch"), std::string::npos) << refused.message();
}

// The rendered script under real sbatch and srun: a stand-in engine records its arguments and the
// rendezvous variables each task saw.
TEST(SlurmCluster, RenderedScriptPreparesOnceThenTrainsOnEveryTask) {
    SLIPWAY_CLUSTER_OR_SKIP(c, "script");
    const std::string local_dir = testing::make_local_temp_dir("engine");
    const std::string engine = local_dir + "/slipway-engine";
    std::ofstream(engine)
        << "#!/bin/bash\n"
           "echo \"engine $1 rank=${SLURM_PROCID} of ${SLURM_NTASKS} "
           "master=${MASTER_ADDR}:${MASTER_PORT:-file} "
           "rdzv=${SLIPWAY_RDZV_FILE##*/} secret=${#SLIPWAY_RDZV_SECRET} job=${SLURM_JOB_ID} config=$2\" >> "
           "\"$(dirname \"$0\")/calls.txt\"\n";
    Result<RunConfig> config =
        load_run_config(std::string(test_paths::source_dir("/resources/presets/demo-tiny.json")));
    ASSERT_TRUE(config.ok()) << config.error();
    DeployRequest request;
    request.config = *config;
    request.input_root = test_paths::source_dir();
    request.profile.name = "local-test";
    request.profile.host = c->env["SLIPWAY_SSH_HOST"];
    request.profile.remote_workdir = c->dir + "/it's a \"work\" dir";
    request.engine_binary = engine;
    SlurmClient slurm(*c->session);
    const std::string records_dir = testing::make_local_temp_dir("records");
    Result<SubmittedRun> run = submit_run(*c->session, slurm, request, RunRecordStore(records_dir));
    ASSERT_TRUE(run.ok()) << run.error();
    std::vector<JobInfo> states = wait_for_end(slurm, run->job.job_id, 60);
    ASSERT_FALSE(states.empty());
    EXPECT_EQ(states.back().state, "COMPLETED");
    Result<std::string> calls = c->session->read_range(run->deployment.remote_dir + "/calls.txt", 0, 10000);
    ASSERT_TRUE(calls.ok()) << calls.error();
    const long long job = std::stoll(run->job.job_id);
    // Rank 0 publishes the port it bound; every task has the job's 32-digit secret.
    const std::string master = "master=" + c->env["SLIPWAY_SLURM_NODE"] + ":file rdzv=.slipway-rendezvous-" +
                               std::to_string(job) + " secret=32";
    const std::string config_path = "config=" + run->deployment.remote_dir + "/run.json";
    EXPECT_EQ(calls->find("engine prepare rank=0 of 1 " + master), 0u) << *calls;
    for (const char* rank : {"rank=0 of 2 ", "rank=1 of 2 "}) {
        EXPECT_NE(calls->find(std::string("engine train ") + rank + master), std::string::npos) << *calls;
    }
    EXPECT_NE(calls->find(config_path), std::string::npos) << *calls;
    EXPECT_EQ(std::count(calls->begin(), calls->end(), '\n'), 3) << *calls;
    std::filesystem::remove_all(local_dir);
    std::filesystem::remove_all(records_dir);
}

}  // namespace
}  // namespace slipway::remote
