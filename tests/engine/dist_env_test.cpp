// dist/env: Slurm nodelist and tasks-per-node expansion, and the precedence of torchrun's and Slurm's
// variables, table-driven with an injected environment.
#include <gtest/gtest.h>

#include <map>

#include "dist/env.h"
#include "dist/rendezvous.h"

#include <filesystem>
#include <fstream>

namespace slipway::dist {
namespace {

using Hosts = std::vector<std::string>;

TEST(Nodelist, ExpandsLikeScontrolShowHostnames) {
    const std::vector<std::pair<std::string, Hosts>> cases = {
        {"node1", {"node1"}},
        {"gpu[01-03,07],cpu5", {"gpu01", "gpu02", "gpu03", "gpu07", "cpu5"}},
        {"n[8-11]", {"n8", "n9", "n10", "n11"}},
        {"a[1-2]b[01-02]", {"a1b01", "a1b02", "a2b01", "a2b02"}},
        {"login,gpu[1,3]", {"login", "gpu1", "gpu3"}},
        {"x[007-009]", {"x007", "x008", "x009"}},
    };
    for (const auto& [input, expected] : cases) {
        const Result<Hosts> hosts = expand_nodelist(input);
        ASSERT_TRUE(hosts.ok()) << input << ": " << hosts.error();
        EXPECT_EQ(*hosts, expected) << input;
    }
    for (const std::string bad : {"gpu[01-03", "gpu]", "gpu[3-1]", "gpu[a-b]", ""}) {
        EXPECT_FALSE(expand_nodelist(bad).ok()) << bad;
    }
    EXPECT_EQ(expand_nodelist("gpu[3-1]").error(),
              "nodelist \"gpu[3-1]\": bad range \"3-1\" in \"gpu[3-1]\"");
}

TEST(TasksPerNode, ExpandsRepeats) {
    EXPECT_EQ(*expand_tasks_per_node("2(x3),1"), (std::vector<int64_t>{2, 2, 2, 1}));
    EXPECT_EQ(*expand_tasks_per_node("8"), (std::vector<int64_t>{8}));
    EXPECT_FALSE(expand_tasks_per_node("2(x").ok());
}

struct EnvCase {
    std::string label;
    std::map<std::string, std::string> vars;
    DistEnv expected;
    std::string error;  // non-empty: expected error text
};

EnvLookup lookup(const std::map<std::string, std::string>& vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        const auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

DistEnv make(int64_t rank, int64_t world, int64_t local, int64_t local_world, int64_t node, std::string addr,
             int port, std::string source) {
    DistEnv d;
    d.rank = rank;
    d.world_size = world;
    d.local_rank = local;
    d.local_world_size = local_world;
    d.node_rank = node;
    d.master_addr = std::move(addr);
    d.master_port = port;
    d.source = std::move(source);
    return d;
}

TEST(DistEnvResolve, PrecedenceAndConsistency) {
    const std::vector<EnvCase> cases = {
        {"nothing set: one local process", {}, make(0, 1, 0, 1, 0, "127.0.0.1", 29500, "single"), ""},
        {"torchrun",
         {{"RANK", "5"},
          {"WORLD_SIZE", "16"},
          {"LOCAL_RANK", "1"},
          {"LOCAL_WORLD_SIZE", "4"},
          {"MASTER_ADDR", "10.0.0.1"},
          {"MASTER_PORT", "29400"}},
         make(5, 16, 1, 4, 1, "10.0.0.1", 29400, "torchrun"),
         ""},
        {"slurm: master = first host, port 0 = published by rank 0 in the port file",
         {{"SLURM_PROCID", "9"},
          {"SLURM_NTASKS", "16"},
          {"SLURM_LOCALID", "1"},
          {"SLURM_NODEID", "1"},
          {"SLURM_TASKS_PER_NODE", "8(x2)"},
          {"SLURM_JOB_NODELIST", "gpu[03-04]"},
          {"SLURM_JOB_ID", "123456"},
          {"SLIPWAY_RDZV_FILE", "/shared/run/.rdzv"}},
         make(9, 16, 1, 8, 1, "gpu03", 0, "slurm"),
         ""},
        {"slurm: no port derived from the job id any more",
         {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "a1"}, {"SLURM_JOB_ID", "7"}},
         {},
         "under Slurm a multi-rank step needs MASTER_PORT or SLIPWAY_RDZV_FILE (a file on a filesystem every "
         "rank sees, where rank 0 publishes the port it bound); Slipway's sbatch script sets the latter"},
        {"slurm: the step's nodelist wins over the job's",
         {{"SLURM_PROCID", "0"},
          {"SLURM_NTASKS", "2"},
          {"SLURM_STEP_NODELIST", "b[2-3]"},
          {"SLURM_JOB_NODELIST", "a[1-4]"},
          {"SLURM_TASKS_PER_NODE", "1(x2)"},
          {"MASTER_PORT", "31000"}},
         make(0, 2, 0, 1, 0, "b2", 31000, "slurm"),
         ""},
        {"torchrun wins over slurm",
         {{"RANK", "3"},
          {"WORLD_SIZE", "8"},
          {"LOCAL_RANK", "3"},
          {"LOCAL_WORLD_SIZE", "4"},
          {"SLURM_PROCID", "0"},
          {"SLURM_NTASKS", "2"},
          {"MASTER_ADDR", "head"}},
         make(3, 8, 3, 4, 0, "head", 29500, "torchrun"),
         ""},
        {"rank outside the world",
         {{"RANK", "4"}, {"WORLD_SIZE", "4"}},
         {},
         "rank must be in [0, world size) (torchrun: rank 4, world size 4, local rank 0, local world size "
         "4)"},
        {"torchrun and slurm disagree",
         {{"RANK", "0"},
          {"WORLD_SIZE", "6"},
          {"LOCAL_WORLD_SIZE", "2"},
          {"SLURM_PROCID", "0"},
          {"SLURM_NTASKS", "4"}},
         {},
         "WORLD_SIZE=6 (torchrun) disagrees with SLURM_NTASKS=4"},
        {"bad number", {{"RANK", "one"}, {"WORLD_SIZE", "2"}}, {}, "RANK=\"one\" is not an integer"},
        {"bad port", {{"MASTER_PORT", "70000"}}, {}, "MASTER_PORT=70000 is not a TCP port"},
        {"node id beyond the task list",
         {{"SLURM_PROCID", "0"},
          {"SLURM_NTASKS", "2"},
          {"SLURM_NODEID", "2"},
          {"SLURM_TASKS_PER_NODE", "1(x2)"}},
         {},
         "SLURM_NODEID=2 but SLURM_TASKS_PER_NODE=\"1(x2)\" lists 2 nodes"},
    };
    for (const EnvCase& c : cases) {
        const Result<DistEnv> env = resolve_dist_env(lookup(c.vars));
        if (!c.error.empty()) {
            ASSERT_FALSE(env.ok()) << c.label;
            EXPECT_EQ(env.error(), c.error) << c.label;
            continue;
        }
        ASSERT_TRUE(env.ok()) << c.label << ": " << env.error();
        EXPECT_EQ(env->rank, c.expected.rank) << c.label;
        EXPECT_EQ(env->world_size, c.expected.world_size) << c.label;
        EXPECT_EQ(env->local_rank, c.expected.local_rank) << c.label;
        EXPECT_EQ(env->local_world_size, c.expected.local_world_size) << c.label;
        EXPECT_EQ(env->node_rank, c.expected.node_rank) << c.label;
        EXPECT_EQ(env->master_addr, c.expected.master_addr) << c.label;
        EXPECT_EQ(env->master_port, c.expected.master_port) << c.label;
        EXPECT_EQ(env->source, c.expected.source) << c.label;
        EXPECT_EQ(env->secret, c.vars.count("SLIPWAY_RDZV_SECRET") ? c.vars.at("SLIPWAY_RDZV_SECRET") : "")
            << c.label;
    }
}

TEST(Rendezvous, SecretsArePrivateAndPrefixesHideThem) {
    const Result<std::string> a = new_rendezvous_secret(), b = new_rendezvous_secret();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->size(), 32u);
    EXPECT_NE(*a, *b);
    EXPECT_EQ(store_prefix(*a).rfind("slipway/", 0), 0u);
    EXPECT_EQ(store_prefix(*a).size(), 8u + 32u);
    EXPECT_EQ(store_prefix(*a).find(*a), std::string::npos);
    EXPECT_NE(store_prefix(*a), store_prefix(*b));
    EXPECT_EQ(store_prefix(*a), store_prefix(*a));
}

TEST(Rendezvous, ThePublishedPortIsReadOnlyWithTheSameSecretAndScope) {
    namespace fs = std::filesystem;
    const fs::path file = fs::path(testing::TempDir()) / "rdzv_port";
    fs::remove(file);
    const std::string secret = "0123456789abcdef0123";
    ASSERT_TRUE(publish_port(file.string(), secret, "7.0", 41234).ok());
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    const auto quick = std::chrono::milliseconds(200);
    const Result<int> port = wait_for_published_port(file.string(), secret, "7.0", quick);
    ASSERT_TRUE(port.ok()) << port.error();
    EXPECT_EQ(*port, 41234);
    for (const auto& [other_secret, other_scope] :
         {std::pair<std::string, std::string>{"another-secret-0123", "7.0"}, {secret, "7.1"}}) {
        const Result<int> refused = wait_for_published_port(file.string(), other_secret, other_scope, quick);
        ASSERT_FALSE(refused.ok());
        EXPECT_NE(refused.error().find("holds a port published with another secret or by another job step"),
                  std::string::npos)
            << refused.error();
    }
    std::ofstream(file) << "41235 forged\n";
    EXPECT_FALSE(wait_for_published_port(file.string(), secret, "7.0", quick).ok());
    fs::remove(file);
    const Result<int> missing = wait_for_published_port(file.string(), secret, "7.0", quick);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("rank 0 did not publish one"), std::string::npos) << missing.error();
}

}  // namespace
}  // namespace slipway::dist
