// The cluster survey (cluster_survey.h): its shell text run by bash against stand-in Slurm tools (sinfo,
// srun with pyxis's flag, sacct with accounting off, apptainer) reads back as what is there, and what it
// says for people names the runtimes and why squeue is used when accounting is off.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

#include "remote/slurm/cluster_survey.h"
#include "run_command.h"
#include "temp_dir.h"

namespace slipway::remote {
namespace {

using testing_support::run_command;
using testing_support::TempDir;

void tool(const std::string& dir, const std::string& name, const std::string& body) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
}

TEST(ClusterSurvey, TheShellTextFindsWhatIsThere) {
    TempDir dir;
    const std::string bin = dir.path() + "/bin";
    ASSERT_EQ(run_command("mkdir -p '" + bin + "'").exit_code, 0);
    tool(bin, "sinfo", "echo 'slurm 24.11.1'");
    tool(bin, "srun", "echo '      --container-image=[USER@][REGISTRY#]IMAGE[:TAG]|PATH'");
    tool(bin, "sacct", "echo 'sacct: error: Slurm accounting storage is disabled' >&2; exit 1");
    tool(bin, "apptainer", "exit 0");
    std::ofstream(dir.path() + "/survey.sh") << survey_command();
    // Only the stand-ins and the shell's own tools: no enroot or singularity, whatever this machine has.
    const auto answer = run_command("env -i PATH='" + bin + ":/usr/bin:/bin' /bin/bash '" + dir.path() +
                                    "/survey.sh' 2>&1 | grep -v '^enroot=/\\|^singularity=/'");
    ASSERT_EQ(answer.exit_code, 0) << answer.output;
    const ClusterSurvey survey = parse_survey(answer.output);
    EXPECT_EQ(survey.slurm_version, "slurm 24.11.1");
    EXPECT_TRUE(survey.pyxis);
    EXPECT_TRUE(survey.apptainer);
    EXPECT_FALSE(survey.accounting);
    EXPECT_EQ(survey.accounting_said, "sacct: error: Slurm accounting storage is disabled");
    const std::vector<std::string> said = describe_survey(survey);
    ASSERT_EQ(said.size(), 3u);
    EXPECT_EQ(said[0], "slurm 24.11.1");
    EXPECT_EQ(said[2],
              "accounting: off (sacct: error: Slurm accounting storage is disabled): ended jobs are followed "
              "with squeue and scontrol");
}

// A runtime the profile's setup brings (as `module load apptainer` does) is found; what the setup prints is
// not taken for an answer.
TEST(ClusterSurvey, TheProfilesSetupLinesRunFirst) {
    TempDir dir;
    const std::string bin = dir.path() + "/bin", module = dir.path() + "/module";
    ASSERT_EQ(run_command("mkdir -p '" + bin + "' '" + module + "'").exit_code, 0);
    tool(bin, "sinfo", "echo 'slurm 24.11.1'");
    tool(module, "apptainer", "exit 0");
    std::ofstream(dir.path() + "/survey.sh")
        << survey_command({"echo 'slurm=a login banner'", "export PATH=" + module + ":$PATH"});
    const auto answer = run_command("env -i PATH='" + bin + ":/usr/bin:/bin' /bin/bash '" + dir.path() +
                                    "/survey.sh' 2>/dev/null | grep -v '^enroot=/\\|^singularity=/'");
    ASSERT_EQ(answer.exit_code, 0) << answer.output;
    const ClusterSurvey survey = parse_survey(answer.output);
    EXPECT_EQ(survey.slurm_version, "slurm 24.11.1");
    EXPECT_TRUE(survey.apptainer) << answer.output;
}

TEST(ClusterSurvey, WhatItSaysForPeople) {
    ClusterSurvey bare;
    bare.slurm_version = "slurm 23.02.7";
    bare.accounting = true;
    EXPECT_EQ(describe_survey(bare),
              (std::vector<std::string>{"slurm 23.02.7", "runtimes: none found (bare srun)",
                                        "accounting: sacct answers"}));
    const ClusterSurvey sites = parse_survey(
        "motd line without a key\nslurm=slurm 24.05.3\nenroot=/usr/bin/enroot\npyxis=0\n"
        "singularity=/opt/singularity/bin/singularity\nmodules=yes\nsacct_status=0\nsacct=\n");
    EXPECT_EQ(describe_survey(sites)[1],
              "runtimes: enroot (without pyxis in srun), singularity; environment modules");
    EXPECT_TRUE(sites.accounting);
}

}  // namespace
}  // namespace slipway::remote
