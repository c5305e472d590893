// The engine a cluster builds (engine_build.h) over FakeSession: the bundle is uploaded once and one build
// job queued, a build still queued is waited on rather than queued twice, an engine with its manifest is
// reused, the fingerprint follows the bundle and the environment, a failed build names the compiler's first
// error and its log, and a submitted run waits for the build (afterok, merged with its own dependency).
#include <gtest/gtest.h>

#include <fstream>

#include "remote/deploy/deploy.h"
#include "remote/deploy/engine_build.h"
#include "remote/ssh/fake_session.h"
#include "temp_dir.h"

namespace slipway::remote {
namespace {

using testing_support::TempDir;

class EngineBuild : public ::testing::Test {
protected:
    void SetUp() override {
        bundle_path_ = dir_.path() + "/slipway-engine-src.tar.gz";
        std::ofstream(bundle_path_) << "a bundle's bytes";
        Result<EngineBundle> bundle = read_engine_bundle(bundle_path_);
        ASSERT_TRUE(bundle.ok()) << bundle.error();
        bundle_ = *bundle;
        config_.name = "demo";
        config_.model.path = "/scratch/models/tiny";
        config_.data.train_file = "/scratch/data/train.jsonl";
        config_.adapter.method = "full";
        config_.slurm.gpus_per_node = 0;
        config_.slurm.container_image = "/scratch/images/pytorch.sif";
        profile_.name = "hpc";
        profile_.host = "login";
        profile_.remote_workdir = "/scratch/u/slipway";
        profile_.container = ContainerMode::kApptainer;
        profile_.engine_source = EngineSource::kBuild;
        profile_.env_setup = {"module load apptainer"};
        session_.put_file("/scratch/images/pytorch.sif", "an image");
        // Slurm: sbatch answers the next job id; squeue shows each job in the state the test set.
        session_.set_exec_handler([this](const std::string& command) -> Result<ExecResult> {
            if (command.find("sbatch --parsable") != std::string::npos)
                return ExecResult{std::to_string(++last_job_) + "\n", "", 0};
            if (command.find("sbatch --test-only") != std::string::npos)
                return ExecResult{"", "sbatch: Job 99 to start at now", 0};
            if (command.rfind("squeue", 0) == 0) {
                std::string rows;
                for (const auto& [job, state] : states_)
                    if (command.find("-j " + job) != std::string::npos)
                        rows += job + "|" + state + "|None|0:01|1|node1\n";
                return ExecResult{rows, "", 0};
            }
            if (command.rfind("bash -lc", 0) == 0 && command.find("import torch") != std::string::npos)
                return torch_.empty() ? ExecResult{"", "", 1}
                                      : ExecResult{"Loading pytorch module\n" + torch_ + "\n", "", 0};
            if (command.rfind("scancel", 0) == 0) {
                cancelled_.push_back(command);
                return ExecResult{"", "", 0};
            }
            return ExecResult{"", "not known here", 1};  // scontrol, sacct: the job is gone
        });
    }

    static EngineBuildWatch quick_watch() {
        EngineBuildWatch watch;
        watch.poll = std::chrono::milliseconds(1);
        return watch;
    }

    int sbatch_count() const {
        int n = 0;
        for (const std::string& c : session_.commands())
            n += c.find("sbatch --parsable") != std::string::npos;
        return n;
    }

    TempDir dir_;
    std::string bundle_path_;
    EngineBundle bundle_;
    RunConfig config_;
    ClusterProfile profile_;
    FakeSession session_;
    SlurmClient slurm_{session_};
    int last_job_ = 40;
    std::map<std::string, std::string> states_;
    std::vector<std::string> cancelled_;
    std::string torch_;  // what python3 says after the setup lines on the login node; "": none there
};

TEST_F(EngineBuild, QueuesOnceWaitsOnItAndThenReusesTheEngine) {
    Result<EnginePlace> first = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_TRUE(first.ok()) << first.error();
    EXPECT_EQ(first->build_job, "41");
    EXPECT_EQ(first->dir, "/scratch/u/slipway/engines/" + first->fingerprint.substr(0, 16));
    EXPECT_EQ(first->engine, first->dir + "/slipway-engine");
    EXPECT_TRUE(session_.has("/scratch/u/slipway/engine/slipway-engine-src-" + bundle_.sha256.substr(0, 16) +
                             ".tar.gz"));
    const std::string script = session_.file(first->dir + "/build.sbatch");
    EXPECT_NE(script.find("  module load apptainer\n"), std::string::npos) << script;
    EXPECT_NE(script.find("container=(apptainer exec --bind \"$mounts\" --pwd \"$workdir\" "
                          "/scratch/images/pytorch.sif)"),
              std::string::npos)
        << script;
    EXPECT_EQ(session_.file(first->dir + "/build.job"), "41\n");
    EXPECT_NE(session_.file(first->dir + "/environment.txt").find("image-file 8 bytes"), std::string::npos);

    // Queued still: the next submission waits on the same job.
    states_["41"] = "PENDING";
    Result<EnginePlace> queued = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_TRUE(queued.ok()) << queued.error();
    EXPECT_EQ(queued->build_job, "41");
    EXPECT_EQ(sbatch_count(), 1);

    // Built: reused, nothing queued or uploaded.
    states_["41"] = "COMPLETED";
    session_.put_file(first->dir + "/slipway-engine", "ELF", 0755);
    session_.put_file(first->dir + "/engine-manifest.json", "{\"torch\": \"2.6.0\"}");
    EXPECT_TRUE(wait_for_engine(session_, slurm_, *first, quick_watch()).ok());
    Result<EnginePlace> built = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_TRUE(built.ok()) << built.error();
    EXPECT_TRUE(built->cached());
    EXPECT_EQ(built->fingerprint, first->fingerprint);
    EXPECT_EQ(sbatch_count(), 1);
    Result<std::vector<BuiltEngine>> listed = list_engines(session_, profile_);
    ASSERT_TRUE(listed.ok()) << listed.error();
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_EQ((*listed)[0].manifest, "{\"torch\": \"2.6.0\"}");
}

TEST_F(EngineBuild, TheFingerprintFollowsTheBundleTheSetupAndTheImageFile) {
    const auto fingerprint = [this] {
        Result<EnginePlace> place = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
        EXPECT_TRUE(place.ok()) << place.error();
        return place.ok() ? place->fingerprint : std::string();
    };
    const std::string first = fingerprint();
    EXPECT_EQ(fingerprint(), first);
    profile_.env_setup.push_back("export OMP_NUM_THREADS=1");
    const std::string setup = fingerprint();
    EXPECT_NE(setup, first);
    session_.put_file("/scratch/images/pytorch.sif", "an image, rebuilt");  // same name, new bytes
    const std::string image = fingerprint();
    EXPECT_NE(image, setup);
    bundle_.sha256 = std::string(64, 'b');
    EXPECT_NE(fingerprint(), image);
    config_.slurm.container_image = "/scratch/images/missing.sif";
    Result<EnginePlace> missing = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("/slurm/container_image: /scratch/images/missing.sif is not on"),
              std::string::npos);
}

TEST_F(EngineBuild, AFailedBuildNamesTheCompilersFirstErrorAndItsLog) {
    Result<EnginePlace> place = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_TRUE(place.ok()) << place.error();
    states_["41"] = "FAILED";
    const std::string log = place->dir + "/build-41.out";
    session_.put_file(log,
                      "-- Configuring done\n[ 40%] Building CXX object engine/eval/metrics.cpp.o\n"
                      "/x/src/engine/eval/metrics.cpp:91:1: error: 'this' does not name a type\n"
                      "/x/src/engine/eval/metrics.cpp:92:1: error: expected declaration\n");
    std::vector<std::string> heard;
    EngineBuildWatch watch = quick_watch();
    watch.progress = [&heard](const std::string& s) { heard.push_back(s); };
    const Status failed = wait_for_engine(session_, slurm_, *place, watch);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(
        failed.message().find("(job 41, FAILED) failed: /x/src/engine/eval/metrics.cpp:91:1: error: 'this' "
                              "does not name a type\n  build log: " +
                              log),
        std::string::npos)
        << failed.message();
    EXPECT_EQ(heard, std::vector<std::string>{"FAILED"});
}

TEST_F(EngineBuild, ASubmittedRunWaitsForTheBuildAndFailsWithIt) {
    class Sink : public RunRecordSink {
    public:
        Status save(const RunRecord&, const std::string&) const override { return Status::Ok(); }
    } sink;
    DeployRequest request;
    request.config = config_;
    request.config.slurm.extra = {"--dependency=afterok:7",
                                  "--kill-on-invalid-dep=yes"};  // a pipeline's step
    request.profile = profile_;
    request.engine_bundle = bundle_path_;
    request.run_id = "demo-1";
    states_["41"] = "FAILED";  // the build the submission queues
    Result<SubmittedRun> run = submit_run(session_, slurm_, request, sink);
    ASSERT_FALSE(run.ok());
    EXPECT_NE(run.error().find("job 42 will not run: the engine's build (job 41, FAILED) failed"),
              std::string::npos)
        << run.error();
    ASSERT_EQ(cancelled_.size(), 1u);
    EXPECT_NE(cancelled_[0].find("42"), std::string::npos);
    const std::string script = session_.file("/scratch/u/slipway/runs/demo-1/run.sbatch");
    EXPECT_NE(script.find("#SBATCH --dependency=afterok:7:41\n"), std::string::npos) << script;
    EXPECT_EQ(script.find("--kill-on-invalid-dep=yes\n#SBATCH --kill-on-invalid-dep=yes"), std::string::npos);
    EXPECT_NE(script.find("\nengine=/scratch/u/slipway/engines/"), std::string::npos);
    EXPECT_NE(script.find("mounts=\"${mounts:+$mounts,}$engine_dir:$engine_dir\""), std::string::npos);

    // Without a bundle there is nothing to build from: said before anything is queued.
    request.engine_bundle.clear();
    const int queued = sbatch_count();
    Result<SubmittedRun> none = submit_run(session_, slurm_, request, sink);
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().find("carries no engine bundle"), std::string::npos);
    EXPECT_EQ(sbatch_count(), queued);
}

// The build log reaches the watcher line by line while the job runs, a line split across two reads once.
TEST_F(EngineBuild, StreamsTheBuildLogAsItGrows) {
    Result<EnginePlace> place = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_TRUE(place.ok()) << place.error();
    const std::string log = engine_build_log(*place);
    EXPECT_EQ(log, place->dir + "/build-41.out");
    states_["41"] = "RUNNING";
    session_.put_file(log, "-- Configuring done\n[ 10%] Building CXX obj");
    std::vector<std::string> lines;
    EngineBuildWatch watch = quick_watch();
    watch.log_line = [&](const std::string& line) {
        lines.push_back(line);
        if (lines.size() == 1) {  // the job writes on and ends
            session_.put_file(log, session_.file(log) + "ect metrics.cpp.o\n[100%] Linking\n");
            session_.put_file(place->dir + "/slipway-engine", "ELF", 0755);
            session_.put_file(place->dir + "/engine-manifest.json", "{}");
            states_["41"] = "COMPLETED";
        }
    };
    ASSERT_TRUE(wait_for_engine(session_, slurm_, *place, watch).ok());
    EXPECT_EQ(lines,
              (std::vector<std::string>{"-- Configuring done", "[ 10%] Building CXX object metrics.cpp.o",
                                        "[100%] Linking"}));
}

// A wait that is asked to stop cancels the build job rather than leaving it to run for nobody.
TEST_F(EngineBuild, AStoppedWaitCancelsTheBuildJob) {
    Result<EnginePlace> place = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_TRUE(place.ok()) << place.error();
    states_["41"] = "RUNNING";
    EngineBuildWatch watch = quick_watch();
    watch.stop_requested = [] { return true; };
    const Status stopped = wait_for_engine(session_, slurm_, *place, watch);
    ASSERT_FALSE(stopped.ok());
    EXPECT_NE(stopped.message().find("cancelled"), std::string::npos) << stopped.message();
    ASSERT_EQ(cancelled_.size(), 1u);
    EXPECT_NE(cancelled_[0].find("41"), std::string::npos) << cancelled_[0];
}

// On bare srun the setup lines are all that name the environment: the torch they bring on the login node is
// part of the fingerprint, so a module whose default torch moves builds again.
TEST_F(EngineBuild, OnBareSrunTheTorchTheSetupBringsIsInTheFingerprint) {
    profile_.container = ContainerMode::kNone;
    profile_.env_setup = {"module load pytorch"};
    config_.slurm.container_image.clear();
    torch_ = "2.5.1+cu121";
    Result<EnginePlace> first = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_TRUE(first.ok()) << first.error();
    EXPECT_NE(first->environment.find("torch 2.5.1+cu121\n"), std::string::npos) << first->environment;
    session_.put_file(first->engine, "ELF", 0755);
    session_.put_file(first->dir + "/engine-manifest.json", "{}");
    Result<EnginePlace> same = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_TRUE(same.ok()) << same.error();
    EXPECT_TRUE(same->cached());
    torch_ = "2.6.0";
    Result<EnginePlace> moved = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_TRUE(moved.ok()) << moved.error();
    EXPECT_NE(moved->fingerprint, first->fingerprint);
    EXPECT_FALSE(moved->cached());
    torch_.clear();
    Result<EnginePlace> unknown = find_or_queue_engine(session_, slurm_, config_, profile_, bundle_);
    ASSERT_TRUE(unknown.ok()) << unknown.error();
    EXPECT_NE(unknown->environment.find("torch not found on the login node\n"), std::string::npos)
        << unknown->environment;
}

}  // namespace
}  // namespace slipway::remote
