// Tests of a pipeline's step scripts: the demo chain renders with its dependencies, passes `bash -n` and
// shellcheck; adversarial folders and paths reach the engine intact as single words and nothing executes;
// job ids that are not sbatch's are refused before they reach a directive.
#include "remote/slurm/pipeline_sbatch.h"
#include "test_paths.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "run_command.h"
#include "temp_dir.h"

namespace slipway::remote {
namespace {

namespace fs = std::filesystem;
using testing_support::TempDir;

using testing_support::CommandResult;
using testing_support::run_command;

ClusterProfile bare() {
    ClusterProfile p;
    p.name = "test";
    p.host = "login";
    p.default_partition = "cpu";
    return p;
}

Pipeline demo() {
    Result<Pipeline> p =
        load_pipeline(std::string(test_paths::source_dir("/resources/presets/pipelines/ruadapt-demo.json")));
    EXPECT_TRUE(p.ok()) << p.error();
    return p.ok() ? *p : Pipeline{};
}

TEST(PipelineSbatch, DemoChainRendersWithDependenciesAndPassesShellcheck) {
    TempDir dir;
    const Pipeline p = demo();
    StepContext c;
    c.run_dir = "/home/u/slipway/runs/ruadapt-demo-1";
    int job = 100;
    std::string previous;
    for (size_t i = 0; i < p.steps.size(); ++i) {
        Result<ResolvedStep> r = resolve_step(p, i, c);
        ASSERT_TRUE(r.ok()) << r.error();
        c.outs[p.steps[i].name] = r->out.empty() ? c.run_dir + "/" + p.steps[i].name + "/output" : r->out;
        if (p.steps[i].is_training()) {
            previous = std::to_string(job++);
            continue;
        }
        StepScriptInputs in{
            p.name, c.run_dir + "/steps/" + p.steps[i].name, c.run_dir + "/slipway-engine", previous, {}, {}};
        Result<std::string> script = render_step_script(p.steps[i], *r, bare(), in);
        ASSERT_TRUE(script.ok()) << script.error();
        EXPECT_NE(script->find("#SBATCH --dependency=afterok:" + previous + "\n"), std::string::npos)
            << *script;
        EXPECT_NE(script->find("#SBATCH --kill-on-invalid-dep=yes\n"), std::string::npos);
        EXPECT_NE(script->find("#SBATCH --ntasks=1\n"), std::string::npos);
        EXPECT_EQ(script->find("gres"), std::string::npos);
        EXPECT_NE(script->find("#SBATCH --partition=cpu\n"), std::string::npos);
        const std::string path = dir.path() + "/" + p.steps[i].name + ".sbatch";
        std::ofstream(path) << *script;
        EXPECT_EQ(run_command("bash -n '" + path + "'").exit_code, 0);
        if (::system("command -v shellcheck >/dev/null 2>&1") == 0) {
            const CommandResult lint = run_command("shellcheck --shell=bash --severity=style '" + path + "'");
            EXPECT_EQ(lint.exit_code, 0) << lint.output << *script;
        }
        previous = std::to_string(job++);
    }
}

TEST(PipelineSbatch, FirstStepHasNoDependency) {
    const Pipeline p = demo();
    Result<ResolvedStep> r =
        resolve_step(p, 2, StepContext{"/r", {{"base", "/r/b"}, {"instruct", "/r/i"}}, {}});
    ASSERT_TRUE(r.ok()) << r.error();
    Result<std::string> script =
        render_step_script(p.steps[2], *r, bare(), {p.name, "/r/steps/tokenizer", "/r/e", "", {}, {}});
    ASSERT_TRUE(script.ok()) << script.error();
    EXPECT_EQ(script->find("dependency"), std::string::npos);
}

TEST(PipelineSbatch, RefusesJobIdsThatAreNotSbatchs) {
    for (const char* bad : {"1; touch /tmp/x", "12\n#SBATCH --uid=0", "$(id)", "1,2", "afterok:1"})
        EXPECT_FALSE(dependency_directives(bad).ok()) << bad;
    Result<std::vector<std::string>> ok = dependency_directives("1234");
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(*ok, (std::vector<std::string>{"--dependency=afterok:1234", "--kill-on-invalid-dep=yes"}));
    const Pipeline p = demo();
    Result<ResolvedStep> r = resolve_step(p, 2, StepContext{"/r", {}, {}});
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(
        render_step_script(p.steps[2], *r, bare(), {p.name, "/r/s", "/r/e", "7 --uid=0", {}, {}}).ok());
    EXPECT_FALSE(render_step_script(p.steps[2], *r, bare(), {p.name, "relative", "/r/e", "", {}, {}}).ok());
}

// Folders and paths a user typed, full of shell syntax, reach the engine as the same single words.
TEST(PipelineSbatch, AdversarialPathsArriveIntactAndNothingRuns) {
    TempDir dir;
    const std::string marker = dir.path() + "/pwned";
    const std::string evil = "it's \"q\" $(touch " + marker + ") `touch " + marker + "`; Привет ✓";
    const std::string step_dir = dir.path() + "/" + evil;
    fs::create_directories(step_dir);
    nlohmann::json doc = nlohmann::json::parse(R"({"schema": "slipway.pipeline/1", "name": "p", "steps": [
        {"name": "eval", "kind": "eval", "model": "/m", "tasks": "/t.json", "out": "out.json"}]})");
    doc["steps"][0]["model"] = "/m/" + evil;
    const ParsedPipeline parsed = parse_pipeline(doc, "");
    ASSERT_TRUE(parsed.problems.empty()) << format_problems(parsed.problems);
    Result<ResolvedStep> r = resolve_step(parsed.pipeline, 0, StepContext{step_dir, {}, {}});
    ASSERT_TRUE(r.ok()) << r.error();
    Result<std::string> script = render_step_script(parsed.pipeline.steps[0], *r, bare(),
                                                    {"p", step_dir, step_dir + "/engine $(x)", "", {}, {}});
    ASSERT_TRUE(script.ok()) << script.error();
    const std::string path = dir.path() + "/step.sbatch";
    std::ofstream(path) << *script;
    // srun stands in as a function printing its words, one per line.
    const CommandResult out =
        run_command("SLURM_JOB_ID=1 bash -c 'srun() { printf \"%s\\n\" \"$@\"; }; . \"$0\"' '" + path + "'");
    ASSERT_EQ(out.exit_code, 0) << out.output << *script;
    // eval's stdout (here srun's words) lands in the step's out file.
    std::ifstream written(step_dir + "/out.json");
    const std::string words((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
    EXPECT_EQ(words, "--nodes=1\n--ntasks=1\n--cpus-per-task=4\n" + step_dir +
                         "/engine $(x)\neval\n--model\n/m/" + evil + "\n--tasks\n/t.json\n");
    EXPECT_FALSE(fs::exists(marker));
}

}  // namespace
}  // namespace slipway::remote

namespace slipway::remote {
namespace {

// The demo's tokenizer step in `environment`, its folder under /scratch/runs.
StepScriptInputs tokenizer_step_inputs(const Pipeline& p, JobEnvironment environment) {
    StepScriptInputs in;
    in.pipeline_name = p.name;
    in.step_dir = "/scratch/runs/p/steps/tokenizer";
    in.environment = std::move(environment);
    in.runs_dir = "/scratch/runs";
    return in;
}

// Under pyxis a CPU step runs the image's engine with the runs folder mounted at the same path.
TEST(PipelineSbatch, PyxisStepRunsInTheImageWithTheRunsFolderMounted) {
    TempDir dir;
    ClusterProfile pyxis = bare();
    pyxis.container = ContainerMode::kPyxis;
    const Pipeline p = demo();
    Result<ResolvedStep> r = resolve_step(p, 2, StepContext{"/scratch/runs/p", {}, {}});
    ASSERT_TRUE(r.ok()) << r.error();
    StepScriptInputs in =
        tokenizer_step_inputs(p, {ContainerMode::kPyxis, "/images/e.sqsh", {"/data:/data"}, "", {}, false});
    in.engine = "slipway-engine";
    in.after_job_id = "41";
    Result<std::string> script = render_step_script(p.steps[2], *r, pyxis, in);
    ASSERT_TRUE(script.ok()) << script.error();
    EXPECT_NE(script->find("container=(--container-image=/images/e.sqsh"), std::string::npos) << *script;
    EXPECT_NE(script->find("runs_dir=/scratch/runs\n"), std::string::npos) << *script;
    EXPECT_NE(script->find("mounts=/data:/data\n"), std::string::npos) << *script;
    EXPECT_NE(script->find("workdir=/scratch/runs/p/steps/tokenizer\n"), std::string::npos) << *script;
    const std::string path = dir.path() + "/pyxis.sbatch";
    std::ofstream(path) << *script;
    EXPECT_EQ(run_command("bash -n '" + path + "'").exit_code, 0);
    StepScriptInputs comma = in;
    comma.runs_dir = "/scratch/a,b";
    EXPECT_FALSE(render_step_script(p.steps[2], *r, pyxis, comma).ok());
    StepScriptInputs bare_image = in;
    bare_image.environment.runtime = ContainerMode::kNone;
    EXPECT_FALSE(render_step_script(p.steps[2], *r, bare(), bare_image).ok());  // an image on bare srun
    StepScriptInputs no_image = in;
    no_image.environment.image.clear();
    const Result<std::string> refused = render_step_script(p.steps[2], *r, pyxis, no_image);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("no training step of the pipeline names an image"), std::string::npos);
}

// Under apptainer with the site's setup line and an engine built on the cluster: the setup runs first, the
// step runs the built engine in the image with the runs and engine folders bound; shellcheck-clean.
TEST(PipelineSbatch, ApptainerStepRunsTheBuiltEngineAfterTheSetupLines) {
    TempDir dir;
    ClusterProfile appt = bare();
    appt.container = ContainerMode::kApptainer;
    const Pipeline p = demo();
    Result<ResolvedStep> r = resolve_step(p, 2, StepContext{"/scratch/runs/p", {}, {}});
    ASSERT_TRUE(r.ok()) << r.error();
    StepScriptInputs in = tokenizer_step_inputs(
        p, {ContainerMode::kApptainer, "/images/e.sif", {}, "", {"module load apptainer"}, false});
    in.engine_dir = "/scratch/engines/0123456789abcdef";
    in.engine = in.engine_dir + "/slipway-engine";
    Result<std::string> script = render_step_script(p.steps[2], *r, appt, in);
    ASSERT_TRUE(script.ok()) << script.error();
    EXPECT_LT(script->find("  module load apptainer\n"), script->find("srun ")) << *script;
    EXPECT_NE(script->find("engine_dir=/scratch/engines/0123456789abcdef\n"), std::string::npos) << *script;
    EXPECT_NE(script->find("container=(apptainer exec --bind \"$mounts\" --pwd \"$workdir\" /images/e.sif)"),
              std::string::npos)
        << *script;
    const std::string path = dir.path() + "/apptainer.sbatch";
    std::ofstream(path) << *script;
    EXPECT_EQ(run_command("bash -n '" + path + "'").exit_code, 0);
    if (run_command("command -v shellcheck").exit_code == 0) {
        const auto checked = run_command("shellcheck -s bash '" + path + "'");
        EXPECT_EQ(checked.exit_code, 0) << checked.output;
    }
}

}  // namespace
}  // namespace slipway::remote
