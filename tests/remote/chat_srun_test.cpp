// The chat's srun command: the run's resources with the profile's defaults, one GPU and --device cuda when
// the run had GPUs, the deployed engine under bare srun and the image's under pyxis, and hostile values
// arriving as data (checked by running the command through sh with srun replaced by printf).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "contract/run_config.h"
#include "remote/slurm/chat_srun.h"

namespace slipway::remote {
namespace {

// What sh makes of `command` with srun printing its words one a line.
std::string words_of(const std::string& command) {
    const std::string script = "srun() { printf '%s\\n' \"$@\"; }; " + command;
    std::string quoted = "'";
    for (char c : script)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    FILE* pipe = popen(("sh -c " + quoted).c_str(), "r");
    std::string out;
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
        out.append(buffer, n);
    pclose(pipe);
    return out;
}

TEST(ChatSrun, BareSrunRunsTheDeployedEngineWithTheRunsResources) {
    RunConfig config;
    config.name = "demo run";
    config.slurm.gpus_per_node = 0;
    config.slurm.time = "00:30:00";
    config.slurm.account = "proj";
    ClusterProfile profile;
    profile.name = "local";
    profile.default_partition = "debug";
    const Result<std::string> command =
        render_chat_srun(config, profile, "/w/runs/r1", {"generate", "--model", "/w/m", "--prompts", "-"});
    ASSERT_TRUE(command.ok()) << command.error();
    EXPECT_EQ(words_of(*command),
              "--nodes=1\n--ntasks=1\n--job-name=demo_run-chat\n--partition=debug\n--account=proj\n"
              "--time=00:30:00\n/w/runs/r1/slipway-engine\ngenerate\n--model\n/w/m\n--prompts\n-\n");
}

TEST(ChatSrun, GpusPyxisAndHostileValues) {
    RunConfig config;
    config.name = "x";
    config.slurm.gpus_per_node = 8;
    config.slurm.partition = "gpu";
    config.slurm.container_image = "/images/e.sqsh";
    config.slurm.container_mounts = {"/data:/data"};
    ClusterProfile profile;
    profile.name = "p";
    profile.container = ContainerMode::kPyxis;
    const std::string hostile = "/m/it's $(touch /tmp/pwned) `id`\nx";
    const Result<std::string> command =
        render_chat_srun(config, profile, "/w/r", {"generate", "--model", hostile});
    ASSERT_TRUE(command.ok()) << command.error();
    const std::string words = words_of(*command);
    EXPECT_NE(words.find(
                  "--gres=gpu:1\n--container-image=/images/e.sqsh\n--container-mounts=/data:/data,/w/r:/w/r\n"
                  "--container-workdir=/w/r\nslipway-engine\ngenerate\n--model\n" +
                  hostile + "\n--device\ncuda\n"),
              std::string::npos)
        << words;
    // A container on a bare-srun profile, a partition with a space, a relative run folder: refused.
    profile.container = ContainerMode::kNone;
    EXPECT_FALSE(render_chat_srun(config, profile, "/w/r", {}).ok());
    profile.container = ContainerMode::kPyxis;
    config.slurm.partition = "gpu --uid=0";
    const Result<std::string> spaced = render_chat_srun(config, profile, "/w/r", {});
    ASSERT_FALSE(spaced.ok());
    EXPECT_NE(spaced.error().find("/slurm/partition"), std::string::npos) << spaced.error();
    config.slurm.partition = "gpu";
    EXPECT_FALSE(render_chat_srun(config, profile, "w/r", {}).ok());
    // A device named by the caller stays.
    const Result<std::string> cpu =
        render_chat_srun(config, profile, "/w/r", {"generate", "--device", "cpu"});
    ASSERT_TRUE(cpu.ok());
    EXPECT_EQ(words_of(*cpu).find("cuda"), std::string::npos);
}

}  // namespace
}  // namespace slipway::remote
