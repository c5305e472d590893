// The environments a job runs in (job_environment.h) and the engine's build job (engine_build_script.h):
// the seed-001 form (a generic NGC .sqsh under pyxis, scratch mounted, the engine built on the cluster),
// apptainer and bare srun with env_setup lines render as the golden files in tests/remote/golden/ say, and
// every rendering passes `bash -n` and shellcheck. SLIPWAY_UPDATE_GOLDEN=1 rewrites the golden files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "contract/run_config.h"
#include "remote/slurm/engine_build_script.h"
#include "remote/slurm/job_environment.h"
#include "remote/slurm/sbatch_script.h"
#include "run_command.h"
#include "temp_dir.h"
#include "test_paths.h"

namespace slipway::remote {
namespace {

using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::TempDir;

const std::string kScratch = "/scratch/tikhomirov/slipway";
const std::string kEngineDir = kScratch + "/engines/0123456789abcdef";

// Seed 001's job: ruadapt's LoRA preset names the generic NGC image and mounts scratch.
RunConfig seed_001() {
    Result<RunConfig> config =
        load_run_config(std::string(test_paths::source_dir("/resources/presets/ruadapt-lora.json")));
    EXPECT_TRUE(config.ok()) << config.error();
    RunConfig c = config.ok() ? *config : RunConfig{};
    c.slurm.container_image = "/scratch/tikhomirov/ngc_cuda_pytorch_24_04_v1+latest.sqsh";
    c.slurm.container_mounts = {"/scratch/tikhomirov:/scratch/tikhomirov"};
    c.slurm.container_workdir = "/scratch/tikhomirov";
    return c;
}

ClusterProfile cluster(ContainerMode mode, std::vector<std::string> setup = {}) {
    ClusterProfile p;
    p.name = "hpc";
    p.host = "login";
    p.remote_workdir = kScratch;
    p.container = mode;
    p.engine_source = EngineSource::kBuild;
    p.env_setup = std::move(setup);
    p.default_partition = "gpu";
    return p;
}

SbatchInputs built_engine() {
    SbatchInputs inputs;
    inputs.run_dir = kScratch + "/runs/ruadapt-lora-20261129-1";
    inputs.engine_dir = kEngineDir;
    inputs.engine = kEngineDir + "/slipway-engine";
    inputs.engine_why = "The engine built on this cluster from bundle 3f2a..., fingerprint 0123456789abcdef.";
    return inputs;
}

// The text equals tests/remote/golden/<name>, and bash -n and shellcheck accept it.
void expect_golden(const std::string& name, const Result<std::string>& text) {
    ASSERT_TRUE(text.ok()) << text.error();
    const std::string path = std::string(test_paths::source_dir("/tests/remote/golden/")) + name;
    if (std::getenv("SLIPWAY_UPDATE_GOLDEN") != nullptr) std::ofstream(path, std::ios::binary) << *text;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream golden;
    golden << in.rdbuf();
    EXPECT_EQ(*text, golden.str()) << name
                                   << " differs from its golden file (SLIPWAY_UPDATE_GOLDEN=1 rewrites it)";
    TempDir dir;
    const std::string script = dir.path() + "/" + name;
    std::ofstream(script) << *text;
    const CommandResult syntax = run_command("bash -n '" + script + "'");
    EXPECT_EQ(syntax.exit_code, 0) << syntax.output;
    if (::system("command -v shellcheck >/dev/null 2>&1") != 0) GTEST_SKIP() << "shellcheck is not installed";
    const CommandResult lint = run_command("shellcheck --shell=bash --severity=style '" + script + "'");
    EXPECT_EQ(lint.exit_code, 0) << name << "\n" << lint.output;
}

TEST(JobEnvironment, Seed001UnderPyxisRunsTheEngineBuiltOnTheMountedWorkdir) {
    const Result<std::string> script =
        render_sbatch_script(seed_001(), cluster(ContainerMode::kPyxis), built_engine());
    expect_golden("seed001_pyxis.sbatch", script);
    ASSERT_TRUE(script.ok());
    // The engine's folder is mounted beside the run's and scratch; nothing runs from the image's PATH.
    EXPECT_NE(script->find("mounts=\"${mounts:+$mounts,}$engine_dir:$engine_dir\""), std::string::npos);
    EXPECT_EQ(script->find("engine=slipway-engine"), std::string::npos);
}

TEST(JobEnvironment, ApptainerExecsTheImageWithTheFoldersBound) {
    RunConfig config = seed_001();
    config.slurm.container_image = "/scratch/tikhomirov/images/pytorch_24.04.sif";
    const ClusterProfile profile = cluster(ContainerMode::kApptainer, {"module load apptainer/1.3"});
    expect_golden("apptainer.sbatch", render_sbatch_script(config, profile, built_engine()));
    EngineBuildInputs build{kEngineDir, kScratch + "/engine/slipway-engine-src-3f2a.tar.gz",
                            "0123456789abcdef0123"};
    expect_golden("apptainer_engine_build.sbatch", render_engine_build_script(config, profile, build));
}

TEST(JobEnvironment, SingularityIsTheSameExecUnderItsOwnName) {
    RunConfig config = seed_001();
    config.slurm.gpus_per_node = 0;
    Result<JobEnvironment> environment = job_environment(config, cluster(ContainerMode::kSingularity));
    ASSERT_TRUE(environment.ok()) << environment.error();
    Result<std::string> lines = environment_lines(*environment, {"run_dir"});
    ASSERT_TRUE(lines.ok()) << lines.error();
    // No GPUs: no --nv (which warns on a node without them).
    EXPECT_NE(lines->find("container=(singularity exec --bind \"$mounts\" --pwd \"$workdir\" "
                          "/scratch/tikhomirov/ngc_cuda_pytorch_24_04_v1+latest.sqsh)"),
              std::string::npos)
        << *lines;
}

TEST(JobEnvironment, BareSrunWithSetupLinesBuildsAndRunsAfterThem) {
    RunConfig config = seed_001();
    config.slurm.container_image.clear();
    config.slurm.container_mounts.clear();
    config.slurm.container_workdir.clear();
    const ClusterProfile profile =
        cluster(ContainerMode::kNone, {"module load pytorch/2.5", "source \"$HOME/venvs/ft/bin/activate\""});
    expect_golden("env_setup.sbatch", render_sbatch_script(config, profile, built_engine()));
    EngineBuildInputs build{kEngineDir, kScratch + "/engine/slipway-engine-src-3f2a.tar.gz",
                            "0123456789abcdef0123"};
    expect_golden("env_setup_engine_build.sbatch", render_engine_build_script(config, profile, build));
}

TEST(JobEnvironment, AnImageNeedsARuntimeThatTakesOne) {
    const Result<JobEnvironment> refused = job_environment(seed_001(), cluster(ContainerMode::kNone));
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("/slurm/container_image is set, but cluster \"hpc\" runs bare srun"),
              std::string::npos);
    const Result<std::string> build = render_engine_build_script(seed_001(), cluster(ContainerMode::kPyxis),
                                                                 {"engines/x", "/b.tar.gz", "00"});
    ASSERT_FALSE(build.ok());
    EXPECT_NE(build.error().find("must be absolute"), std::string::npos);
}

}  // namespace
}  // namespace slipway::remote
