// Tests of the image tasks the CLI and the Container page share: when the Build and Import buttons may run
// (and the reason shown when not), the default tag, and build and import over FakeSession (remote paths
// resolved against $HOME, <workdir>/bin first on PATH, the Dockerfile uploaded as rendered).
#include <gtest/gtest.h>

#include <memory>

#include "images/image_tasks.h"
#include "remote/ssh/fake_session.h"
#include "test_paths.h"

namespace slipway::app {
namespace {

RunConfig demo_config() {
    Result<RunConfig> config = load_run_config(test_paths::source_dir("/resources/presets/demo-tiny.json"));
    EXPECT_TRUE(config.ok()) << config.error();
    return config.ok() ? *config : RunConfig{};
}

remote::ClusterProfile pyxis_profile() {
    remote::ClusterProfile p;
    p.name = "gpu-cluster";
    p.host = "login.example.org";
    p.container = remote::ContainerMode::kPyxis;
    return p;
}

TEST(ImageActions, BuildNeedsAClusterTargetAValidConfigAndATag) {
    const RunConfig config = demo_config();
    const remote::ClusterProfile cluster = pyxis_profile();
    const std::string tag = "slipway/demo:24.04";
    ImageActionState s = image_action_state(ImageAction::kBuild, config, true, nullptr, tag, false);
    EXPECT_FALSE(s.enabled);
    EXPECT_NE(s.reason.find("This computer has no build host"), std::string::npos) << s.reason;
    s = image_action_state(ImageAction::kBuild, config, false, &cluster, tag, false);
    EXPECT_FALSE(s.enabled);
    EXPECT_NE(s.reason.find("problems"), std::string::npos) << s.reason;
    s = image_action_state(ImageAction::kBuild, config, true, &cluster, "Bad Tag", false);
    EXPECT_FALSE(s.enabled);
    EXPECT_NE(s.reason.find("Image tag"), std::string::npos) << s.reason;
    s = image_action_state(ImageAction::kBuild, config, true, &cluster, tag, true);
    EXPECT_FALSE(s.enabled);
    EXPECT_NE(s.reason.find("running"), std::string::npos) << s.reason;
    s = image_action_state(ImageAction::kBuild, config, true, &cluster, tag, false);
    EXPECT_TRUE(s.enabled);
    EXPECT_NE(s.reason.find("login.example.org"), std::string::npos) << s.reason;
}

TEST(ImageActions, ImportNeedsAPyxisClusterAndASqshPath) {
    RunConfig config = demo_config();
    remote::ClusterProfile cluster = pyxis_profile();
    const std::string tag = "slipway/demo:24.04";
    ImageActionState s = image_action_state(ImageAction::kImport, config, true, &cluster, tag, false);
    EXPECT_FALSE(s.enabled);
    EXPECT_NE(s.reason.find("container_image is empty"), std::string::npos) << s.reason;
    config.slurm.container_image = "nvcr.io/nvidia/pytorch:24.04-py3";
    s = image_action_state(ImageAction::kImport, config, true, &cluster, tag, false);
    EXPECT_FALSE(s.enabled);
    EXPECT_NE(s.reason.find("not a .sqsh"), std::string::npos) << s.reason;
    config.slurm.container_image = "/scratch/u/demo.sqsh";
    s = image_action_state(ImageAction::kImport, config, true, &cluster, tag, false);
    EXPECT_TRUE(s.enabled) << s.reason;
    EXPECT_NE(s.reason.find("/scratch/u/demo.sqsh"), std::string::npos) << s.reason;
    cluster.container = remote::ContainerMode::kNone;
    s = image_action_state(ImageAction::kImport, config, true, &cluster, tag, false);
    EXPECT_FALSE(s.enabled);
    EXPECT_NE(s.reason.find("bare srun"), std::string::npos) << s.reason;
    EXPECT_FALSE(image_action_state(ImageAction::kImport, config, true, nullptr, tag, false).enabled);
}

TEST(ImageActions, DefaultTagIsAValidReference) {
    RunConfig config = demo_config();
    config.name = "  Saiga LoRA (test)!";
    EXPECT_EQ(default_image_tag(config), "slipway/saiga-lora--test:24.04");
    EXPECT_TRUE(remote::check_image_reference(default_image_tag(config)).ok());
    config.container.base = "python:3.11";
    config.name = "";
    EXPECT_EQ(default_image_tag(config), "slipway/run:custom");
}

// Answers like a login host: $HOME is /home/u; a started job (build or import, `name`) writes `log` and
// exits 0 at once. Returns the start commands it saw.
std::shared_ptr<std::vector<std::string>> answer_as_host(remote::FakeSession& session,
                                                         const std::string& name, const std::string& log) {
    auto started = std::make_shared<std::vector<std::string>>();
    session.set_exec_handler([&session, started, name, log](const std::string& command) {
        if (command.find("nohup") == std::string::npos)
            return Result<remote::ExecResult>(remote::ExecResult{"/home/u", "", 0});  // $HOME
        started->push_back(command);
        const std::string dir = command.substr(3, command.find(" && ") - 3);
        session.put_file(dir + "/" + name + ".log", log);
        session.put_file(dir + "/" + name + ".rc", "0\n");
        return Result<remote::ExecResult>(remote::ExecResult{"", "", 0});
    });
    return started;
}

// Runs `task` without waiting between polls; its output lines go to `lines`.
Result<ImageTaskOutcome> run_collecting(remote::FakeSession& session, ImageTask task,
                                        std::vector<std::string>& lines) {
    task.job.poll_interval = std::chrono::milliseconds(0);
    return run_image_task(session, task, [&lines](const std::string& l) { lines.push_back(l); });
}

TEST(ImageTask, ImportResolvesPathsAndPutsTheWorkdirToolsFirst) {
    remote::FakeSession session;
    const auto started = answer_as_host(session, "import", "[INFO] Creating squashfs filesystem...\n");
    ImageTask task;
    task.action = ImageAction::kImport;
    task.image = "slipway/demo:24.04";
    task.sqsh = "images/demo.sqsh";
    task.remote_workdir = "~/slipway";
    std::vector<std::string> lines;
    Result<ImageTaskOutcome> done = run_collecting(session, task, lines);
    ASSERT_TRUE(done.ok()) << done.error();
    EXPECT_EQ(done->exit_status, 0);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].rfind("importing slipway/demo:24.04 into /home/u/images/demo.sqsh on ", 0), 0u)
        << lines[0];
    EXPECT_EQ(lines[1], "[INFO] Creating squashfs filesystem...");
    ASSERT_EQ(started->size(), 1u);
    EXPECT_EQ((*started)[0].rfind("cd /home/u/slipway/images/slipway_demo_24.04-", 0), 0u) << (*started)[0];
    EXPECT_NE((*started)[0].find("PATH=/home/u/slipway/bin:"), std::string::npos) << (*started)[0];
    EXPECT_NE((*started)[0].find("enroot import -o /home/u/images/demo.sqsh dockerd://slipway/demo:24.04"),
              std::string::npos);
    EXPECT_NE(done->log_path.find("/home/u/slipway/images/slipway_demo_24.04-"), std::string::npos);
}

TEST(ImageTask, BuildUploadsTheRenderedDockerfileWithAnEmptyContext) {
    remote::FakeSession session;
    answer_as_host(session, "build", "Successfully tagged slipway/demo:24.04\n");
    ImageTask task;
    task.config = demo_config();
    task.config.container.build_engine = false;  // nothing to copy: an empty context
    task.image = "slipway/demo:24.04";
    task.source_root = test_paths::source_dir();
    std::vector<std::string> lines;
    Result<ImageTaskOutcome> done = run_collecting(session, task, lines);
    ASSERT_TRUE(done.ok()) << done.error();
    EXPECT_EQ(done->exit_status, 0);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[1], "Successfully tagged slipway/demo:24.04");
    const std::string folder = done->log_path.substr(0, done->log_path.rfind('/'));
    Result<std::string> dockerfile = image_dockerfile(task.config, task.source_root);
    ASSERT_TRUE(dockerfile.ok());
    EXPECT_EQ(session.file(folder + "/Dockerfile"), *dockerfile);
    EXPECT_TRUE(session.has(folder + "/context.tar.gz"));
    task.config.training.learning_rate = -1;  // an invalid config is never built
    EXPECT_FALSE(run_image_task(session, task, [](const std::string&) {}).ok());
}

}  // namespace
}  // namespace slipway::app
