// Tests of the sbatch renderer: every preset renders, passes `bash -n` and shellcheck, carries the
// resources of its `slurm` section, and values that reach the shell are quoted (an adversarial run folder
// is printed back intact by the script's own assignment, nothing executes).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include "run_command.h"
#include "temp_dir.h"
#include "test_paths.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "contract/run_config.h"
#include "remote/slurm/sbatch_script.h"

namespace slipway::remote {
namespace {

namespace fs = std::filesystem;

using testing_support::TempDir;

using testing_support::CommandResult;
using testing_support::run_command;

RunConfig preset(const std::string& name) {
    Result<RunConfig> config =
        load_run_config(std::string(test_paths::source_dir("/resources/presets/")) + name);
    EXPECT_TRUE(config.ok()) << config.error();
    return config.ok() ? *config : RunConfig{};
}

ClusterProfile profile(ContainerMode mode) {
    ClusterProfile p;
    p.name = "test";
    p.host = "login";
    p.container = mode;
    return p;
}

std::string write_script(const TempDir& dir, const std::string& name, const std::string& text) {
    const std::string path = dir.path() + "/" + name;
    std::ofstream(path) << text;
    return path;
}

SbatchInputs in_folder(const std::string& run_dir) {
    SbatchInputs inputs;
    inputs.run_dir = run_dir;
    return inputs;
}

bool has_line(const std::string& text, const std::string& line) {
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) {
        if (l == line) return true;
    }
    return false;
}

TEST(SbatchScript, EveryPresetPassesBashAndShellcheck) {
    TempDir dir;
    for (const auto& entry :
         fs::directory_iterator(std::string(test_paths::source_dir("/resources/presets")))) {
        if (entry.path().extension() != ".json") continue;  // <name>.md: the preset's description
        const RunConfig config = preset(entry.path().filename().string());
        const ContainerMode mode =
            config.slurm.container_image.empty() ? ContainerMode::kNone : ContainerMode::kPyxis;
        for (const char* run_dir : {"", "/scratch/u/slipway/runs/x-1"}) {
            SbatchInputs inputs;
            inputs.run_dir = run_dir;
            Result<std::string> script = render_sbatch_script(config, profile(mode), inputs);
            ASSERT_TRUE(script.ok()) << entry.path() << ": " << script.error();
            const std::string path = write_script(dir, config.name + ".sbatch", *script);
            const CommandResult syntax = run_command("bash -n '" + path + "'");
            EXPECT_EQ(syntax.exit_code, 0) << entry.path() << "\n" << syntax.output << "\n" << *script;
            if (::system("command -v shellcheck >/dev/null 2>&1") != 0)
                GTEST_SKIP() << "shellcheck is not installed";
            const CommandResult lint = run_command("shellcheck --shell=bash --severity=style '" + path + "'");
            EXPECT_EQ(lint.exit_code, 0) << entry.path() << "\n" << lint.output << "\n" << *script;
        }
    }
}

TEST(SbatchScript, ResourcesFromTheSlurmSectionAndProfileDefaults) {
    RunConfig config = preset("mlperf-llama2-70b-lora.json");
    config.slurm.nodes = 4;
    config.slurm.cpus_per_task = 12;
    config.slurm.account = "proj42";
    config.slurm.extra = {"--mail-type=END"};
    ClusterProfile p = profile(ContainerMode::kPyxis);
    p.default_partition = "gpu";
    p.default_qos = "high";
    p.default_account = "ignored-because-the-config-names-one";
    Result<std::string> script = render_sbatch_script(config, p, in_folder("/scratch/runs/r1"));
    ASSERT_TRUE(script.ok()) << script.error();
    for (const char* line : {"#!/bin/bash",
                             "#SBATCH --job-name=mlperf-llama2-70b-lora",
                             "#SBATCH --nodes=4",
                             "#SBATCH --ntasks-per-node=8",
                             "#SBATCH --gres=gpu:8",
                             "#SBATCH --cpus-per-task=12",
                             "#SBATCH --time=01:30:00",
                             "#SBATCH --partition=gpu",
                             "#SBATCH --account=proj42",
                             "#SBATCH --qos=high",
                             "#SBATCH --exclusive",
                             "#SBATCH --output=slurm-%j.out",
                             "#SBATCH --mail-type=END",
                             "run_dir=/scratch/runs/r1",
                             "engine=slipway-engine",
                             "mapfile -t hosts < <(scontrol show hostnames \"$SLURM_JOB_NODELIST\")",
                             "export MASTER_ADDR=\"${hosts[0]}\"",
                             "unset MASTER_PORT",
                             "SLIPWAY_RDZV_SECRET=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')",
                             "export SLIPWAY_RDZV_SECRET",
                             "export SLIPWAY_RDZV_FILE=\"$run_dir/.slipway-rendezvous-$SLURM_JOB_ID\""}) {
        EXPECT_TRUE(has_line(*script, line)) << "missing: " << line << "\n" << *script;
    }
    EXPECT_NE(script->find("--container-image=/scratch/workdir/mlperf-nvidia+llama2_70b_lora-pyt.sqsh"),
              std::string::npos);
    EXPECT_NE(
        script->find("mounts=/scratch/workdir/mlperf-datasets:/data,/scratch/workdir/mlperf_logs:/results"),
        std::string::npos);
    EXPECT_TRUE(has_line(*script, "workdir=/workspace"));
    // Prepare on one task strictly before training on all.
    const size_t prepare = script->find("srun --nodes=1 --ntasks=1 --cpus-per-task=12");
    const size_t train = script->find("srun --kill-on-bad-exit=1 --cpus-per-task=12");
    ASSERT_NE(prepare, std::string::npos) << *script;
    ASSERT_NE(train, std::string::npos) << *script;
    EXPECT_LT(prepare, train);
    EXPECT_NE(script->find("\"$engine\" prepare \"$run_json\"", prepare), std::string::npos);
    EXPECT_NE(script->find("\"$engine\" train \"$run_json\"", train), std::string::npos);
}

TEST(SbatchScript, BareSrunWithTheDeployedEngine) {
    const RunConfig config = preset("demo-tiny.json");
    Result<std::string> script =
        render_sbatch_script(config, profile(ContainerMode::kNone), in_folder("/home/u/runs/a"));
    ASSERT_TRUE(script.ok()) << script.error();
    EXPECT_TRUE(has_line(*script, "#SBATCH --ntasks-per-node=2"));
    EXPECT_EQ(script->find("--gres"), std::string::npos);
    EXPECT_EQ(script->find("--container"), std::string::npos);
    EXPECT_TRUE(has_line(*script, "engine=\"$run_dir/slipway-engine\""));
    EXPECT_TRUE(has_line(*script, "run_json=\"$run_dir\"/run.json"));
}

TEST(SbatchScript, ContainerOnAClusterWithoutPyxisIsRefused) {
    Result<std::string> script =
        render_sbatch_script(preset("mlperf-llama2-70b-lora.json"), profile(ContainerMode::kNone));
    ASSERT_FALSE(script.ok());
    EXPECT_NE(script.error().find("/slurm/container_image"), std::string::npos);
}

TEST(SbatchScript, PyxisRunFolderMustFitAMountEntry) {
    Result<std::string> script = render_sbatch_script(
        preset("mlperf-llama2-70b-lora.json"), profile(ContainerMode::kPyxis), in_folder("/scratch/a,b"));
    ASSERT_FALSE(script.ok());
    EXPECT_NE(script.error().find("mount list"), std::string::npos);
}

TEST(SbatchScript, InvalidConfigIsRefusedWithItsPointer) {
    RunConfig config = preset("demo-tiny.json");
    config.slurm.partition = "gpu; rm -rf ~";
    Result<std::string> script = render_sbatch_script(config, profile(ContainerMode::kNone));
    ASSERT_FALSE(script.ok());
    EXPECT_NE(script.error().find("/slurm/partition"), std::string::npos);
}

TEST(SbatchScript, JobNameIsASlurmWord) {
    EXPECT_EQ(slurm_job_name("saiga-lora_v2.1"), "saiga-lora_v2.1");
    EXPECT_EQ(slurm_job_name("it's $(touch /tmp/pwned) `id`; x"), "it_s___touch__tmp_pwned___id___x");
    EXPECT_EQ(slurm_job_name(""), "slipway");
    EXPECT_EQ(slurm_job_name(std::string(100, 'a')).size(), 64u);
}

// The script's own assignments, run by bash, give back the adversarial run folder byte for byte, and the
// command substitution and backticks in it never run.
TEST(SbatchScript, AdversarialRunFolderArrivesIntactAndNothingRuns) {
    TempDir dir;
    const std::string marker = dir.path() + "/pwned";
    const std::string run_dir = "/tmp/it's \"q\" $(touch " + marker + ") `touch " + marker + "`; Привет ✓";
    RunConfig config = preset("demo-tiny.json");
    config.name = "it's $(touch " + marker + ")";
    Result<std::string> script =
        render_sbatch_script(config, profile(ContainerMode::kNone), in_folder(run_dir));
    ASSERT_TRUE(script.ok()) << script.error();
    // Keep only the variable assignments (the part before `cd`), then print them.
    const std::string head = script->substr(0, script->find("cd \"$run_dir\""));
    const std::string probe = write_script(
        dir, "probe.sh", head + "printf '%s\\n%s\\n%s' \"$run_dir\" \"$engine\" \"$run_json\"\n");
    const CommandResult r = run_command("bash '" + probe + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output, run_dir + "\n" + run_dir + "/slipway-engine\n" + run_dir + "/run.json");
    EXPECT_FALSE(fs::exists(marker));
    const std::string path = write_script(dir, "adversarial.sbatch", *script);
    EXPECT_EQ(run_command("bash -n '" + path + "'").exit_code, 0);
}

// The script's stops, run by bash with stand-ins for srun and scontrol on PATH (the real Slurm runs are the
// cluster tests'): Slurm's early USR1 reaches the training step's tasks as TERM (through scancel --signal),
// the job requeues itself while restarts are left, a restarted job resumes, and a TERM (scancel, preemption)
// never requeues by itself.
class SbatchStops : public testing::Test {
protected:
    void SetUp() override {
        RunConfig config = preset("demo-tiny.json");
        config.slurm.auto_requeue = true;
        config.slurm.max_restarts = 2;
        config.slurm.signal_lead_s = 90;
        SbatchInputs inputs = in_folder(dir_.path() + "/run");
        fs::create_directories(dir_.path() + "/run");
        fs::create_directories(dir_.path() + "/bin");
        Result<std::string> rendered = render_sbatch_script(config, profile(ContainerMode::kNone), inputs);
        ASSERT_TRUE(rendered.ok()) << rendered.error();
        script_ = *rendered;
        write_script(dir_, "job.sbatch", script_);
        // srun records its arguments; its training step (its pid in $LOG.training) runs until TERM and then
        // exits as the engine does; scancel --signal passes the signal to it, as Slurm does to the tasks.
        write_script(dir_, "bin/srun",
                     "#!/bin/bash\n"
                     "echo \"srun $*\" >> \"$LOG\"\n"
                     "case \" $* \" in *\" train \"*)\n"
                     "  trap 'echo \"train got TERM\" >> \"$LOG\"; exit 143' TERM\n"
                     "  echo $$ > \"$LOG.training\"\n"
                     "  while :; do sleep 0.05; done ;;\n"
                     "esac\n");
        write_script(dir_, "bin/scontrol",
                     "#!/bin/bash\n"
                     "case \"$1\" in show) echo node1 ;; *) echo \"scontrol $*\" >> \"$LOG\" ;; esac\n");
        write_script(dir_, "bin/scancel",
                     "#!/bin/bash\n"
                     "echo \"scancel $*\" >> \"$LOG\"\n"
                     "kill -\"${1#--signal=}\" \"$(cat \"$LOG.training\")\"\n");
        for (const char* tool : {"srun", "scontrol", "scancel"})
            fs::permissions(dir_.path() + "/bin/" + tool, fs::perms::owner_all);
    }

    // Runs the job as restart `restart`, sends it `signal` once its training step runs; returns the log of
    // what srun and scontrol were asked, then the script's exit status.
    std::string run_job(int restart, const char* signal) {
        const std::string log = dir_.path() + "/calls-" + std::to_string(restart) + "-" + signal;
        // Slurm's TERM (scancel, preemption) reaches every process of the job, the tasks too.
        const std::string also_tasks =
            std::string(signal) == "TERM" ? "kill -TERM \"$(cat \"$LOG.training\")\"\n" : "";
        const std::string driver = write_script(
            dir_, "driver.sh",
            "export LOG='" + log + "' PATH='" + dir_.path() + "/bin':\"$PATH\" SLURM_JOB_ID=42 " +
                "SLURM_JOB_NODELIST=node1 SLURM_RESTART_COUNT=" + std::to_string(restart) + "\n" + "bash '" +
                dir_.path() + "/job.sbatch' > '" + log + ".out' 2>&1 &\n" + "pid=$!\n" +
                "for _ in $(seq 400); do [ -s \"$LOG.training\" ] && break; sleep 0.05; done\n" + "kill -" +
                signal + " \"$pid\"\n" + also_tasks + "wait \"$pid\"\n" + "echo \"exit $?\" >> \"$LOG\"\n");
        const CommandResult r = run_command("bash '" + driver + "'");
        EXPECT_EQ(r.exit_code, 0) << r.output;
        std::ifstream in(log);
        std::stringstream text;
        text << in.rdbuf();
        std::ifstream out(log + ".out");
        std::stringstream printed;
        printed << out.rdbuf();
        output_ = printed.str();
        return text.str();
    }

    TempDir dir_;
    std::string script_;
    std::string output_;  // what the job printed
};

TEST_F(SbatchStops, DirectivesAskForTheEarlySignalAndRequeue) {
    for (const char* line : {"#SBATCH --signal=B:USR1@90", "#SBATCH --requeue", "#SBATCH --open-mode=append"})
        EXPECT_TRUE(has_line(script_, line)) << line << "\n" << script_;
    const std::string path = dir_.path() + "/job.sbatch";
    EXPECT_EQ(run_command("bash -n '" + path + "'").exit_code, 0);
    if (::system("command -v shellcheck >/dev/null 2>&1") != 0) GTEST_SKIP() << "shellcheck is not installed";
    const CommandResult lint = run_command("shellcheck --shell=bash --severity=style '" + path + "'");
    EXPECT_EQ(lint.exit_code, 0) << lint.output << "\n" << script_;
}

TEST_F(SbatchStops, TimeLimitSignalCheckpointsThenRequeues) {
    const std::string calls = run_job(0, "USR1");
    EXPECT_NE(calls.find(" prepare "), std::string::npos) << calls;
    EXPECT_NE(calls.find(" train "), std::string::npos) << calls;
    EXPECT_EQ(calls.find("--resume-latest-if-any"), std::string::npos) << "a first run starts as configured\n"
                                                                       << calls;
    EXPECT_NE(calls.find("scancel --signal=TERM 42\ntrain got TERM\nscontrol requeue 42\nexit 0\n"),
              std::string::npos)
        << calls;
    EXPECT_NE(output_.find("the time limit is near (USR1)"), std::string::npos) << output_;
    EXPECT_NE(output_.find("requeueing job 42 (restart 1 of at most 2)"), std::string::npos) << output_;
}

TEST_F(SbatchStops, ARestartResumesAndTheLastOneStopsAtItsCheckpoint) {
    const std::string calls = run_job(2, "USR1");
    EXPECT_NE(calls.find(" --resume-latest-if-any\n"), std::string::npos) << calls;
    EXPECT_EQ(calls.find("scontrol requeue"), std::string::npos) << calls;
    EXPECT_NE(calls.find("scancel --signal=TERM 42\ntrain got TERM\nexit 143\n"), std::string::npos) << calls;
    EXPECT_NE(output_.find("restart 2 of job 42: resuming from the newest checkpoint"), std::string::npos)
        << output_;
    EXPECT_NE(output_.find("no restart left (/slurm/max_restarts 2)"), std::string::npos) << output_;
}

TEST_F(SbatchStops, TermStopsTheTrainingAndLeavesRequeueingToSlurm) {
    const std::string calls = run_job(0, "TERM");
    EXPECT_NE(calls.find("train got TERM\nexit 143\n"), std::string::npos) << calls;
    EXPECT_EQ(calls.find("scontrol requeue"), std::string::npos) << calls;
    EXPECT_EQ(calls.find("scancel"), std::string::npos) << "Slurm signals the tasks itself\n" << calls;
}

}  // namespace
}  // namespace slipway::remote
