// Tests of the enroot commands and the remote image build and import over FakeSession: uploads, a detached
// build whose log is streamed line by line (through a dropped connection), its exit status, the tool folder
// first on PATH, stopping the follow, and refused image references that never reach a command line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "remote/container/image_build.h"
#include "remote/ssh/fake_session.h"

namespace slipway::remote {
namespace {

TEST(Enroot, ImportCommands) {
    EXPECT_EQ(*enroot_import_command("slipway/saiga:1", "/scratch/u/saiga.sqsh"),
              "enroot import -o /scratch/u/saiga.sqsh dockerd://slipway/saiga:1");
    EXPECT_EQ(*enroot_import_from_tarball_command("/scratch/u/img file.tar", "slipway/saiga:1",
                                                  "/scratch/u/s.sqsh"),
              "podman load -i '/scratch/u/img file.tar' && enroot import -o /scratch/u/s.sqsh "
              "podman://slipway/saiga:1");
    EXPECT_FALSE(enroot_import_command("x;reboot", "/s.sqsh").ok());
    EXPECT_FALSE(enroot_import_command("$(id)", "/s.sqsh").ok());
    EXPECT_TRUE(check_image_reference("nvcr.io/nvidia/pytorch:24.04-py3").ok());
    EXPECT_FALSE(check_image_reference("Upper/case").ok());
}

class RemoteBuild : public ::testing::Test {
protected:
    void SetUp() override {
        context_ = (std::filesystem::temp_directory_path() /
                    ("slipway-ctx-" + std::to_string(::getpid()) + ".tar.gz"))
                       .string();
        std::ofstream(context_) << "tarball bytes";
        request_.build_dir = "/home/u/slipway/builds/b1";
        request_.dockerfile = "FROM nvcr.io/nvidia/pytorch:24.04-py3\n";
        request_.context_tarball = context_;
        request_.image = "slipway/demo:1";
        request_.sqsh = "/home/u/slipway/demo.sqsh";
        request_.job.poll_interval = std::chrono::milliseconds(0);
    }
    void TearDown() override { std::filesystem::remove(context_); }

    std::string context_;
    RemoteBuildRequest request_;
};

TEST_F(RemoteBuild, StreamsTheLogAndReturnsTheExitStatus) {
    FakeSession session;
    session.set_exec_handler([&session](const std::string&) {
        session.put_file("/home/u/slipway/builds/b1/build.log",
                         "Step 1/9 : FROM nvcr.io/nvidia/pytorch:24.04-py3\n");
        return Result<ExecResult>(ExecResult{"", "", 0});
    });
    std::vector<std::string> lines;
    int polls = 0;
    Result<int> rc = build_image_remotely(session, request_, [&](const std::string& line) {
        lines.push_back(line);
        if (++polls == 1) {  // the build goes on while we follow it, then ends without a final newline
            session.append_file("/home/u/slipway/builds/b1/build.log",
                                "Successfully tagged slipway/demo:1\nImported");
            session.put_file("/home/u/slipway/builds/b1/build.rc", "0\n");
        }
    });
    ASSERT_TRUE(rc.ok()) << rc.error();
    EXPECT_EQ(*rc, 0);
    EXPECT_EQ(lines, (std::vector<std::string>{"Step 1/9 : FROM nvcr.io/nvidia/pytorch:24.04-py3",
                                               "Successfully tagged slipway/demo:1", "Imported"}));
    EXPECT_EQ(session.file("/home/u/slipway/builds/b1/Dockerfile"), request_.dockerfile);
    EXPECT_EQ(session.file("/home/u/slipway/builds/b1/context.tar.gz"), "tarball bytes");
    ASSERT_EQ(session.commands().size(), 1u);
    const std::string& start = session.commands()[0];
    EXPECT_EQ(start.rfind("cd /home/u/slipway/builds/b1 && nohup sh -c '", 0), 0u) << start;
    EXPECT_NE(start.find("docker build -f Dockerfile -t slipway/demo:1 context"), std::string::npos) << start;
    EXPECT_NE(start.find("enroot import -o /home/u/slipway/demo.sqsh dockerd://slipway/demo:1"),
              std::string::npos);
}

TEST_F(RemoteBuild, FailedBuildAndDroppedConnection) {
    FakeSession session;
    session.set_exec_handler([&session](const std::string&) {
        session.put_file("/home/u/slipway/builds/b1/build.log", "ERROR: failed to solve\n");
        session.put_file("/home/u/slipway/builds/b1/build.rc", "1\n");
        session.fail_next(FakeFault::kDropConnection);  // lost while following the log
        return Result<ExecResult>(ExecResult{"", "", 0});
    });
    std::vector<std::string> lines;
    Result<int> rc =
        build_image_remotely(session, request_, [&](const std::string& l) { lines.push_back(l); });
    ASSERT_TRUE(rc.ok()) << rc.error();
    EXPECT_EQ(*rc, 1);
    EXPECT_EQ(lines, std::vector<std::string>{"ERROR: failed to solve"});
    EXPECT_EQ(session.reconnect_count(), 1);
}

TEST_F(RemoteBuild, BadReferenceOrFolderNeverRuns) {
    FakeSession session;
    request_.image = "demo; rm -rf ~";
    EXPECT_FALSE(build_image_remotely(session, request_, [](const std::string&) {}).ok());
    request_.image = "slipway/demo:1";
    request_.build_dir = "builds";
    EXPECT_FALSE(build_image_remotely(session, request_, [](const std::string&) {}).ok());
    EXPECT_TRUE(session.commands().empty());
}

TEST_F(RemoteBuild, ToolFolderComesFirstOnPath) {
    FakeSession session;
    session.set_exec_handler([&session](const std::string&) {
        session.put_file("/home/u/slipway/builds/b1/build.rc", "0\n");
        return Result<ExecResult>(ExecResult{"", "", 0});
    });
    request_.job.tool_dir = "/home/u/my tools/bin";
    ASSERT_TRUE(build_image_remotely(session, request_, [](const std::string&) {}).ok());
    ASSERT_EQ(session.commands().size(), 1u);
    // Quoted twice: once as a word of the script, once as the script given to sh -c.
    EXPECT_NE(session.commands()[0].find("PATH='\\''/home/u/my tools/bin'\\'':\"$PATH\"; export PATH; "),
              std::string::npos)
        << session.commands()[0];
}

TEST_F(RemoteBuild, StopRequestedEndsTheFollowNotTheBuild) {
    FakeSession session;
    session.set_exec_handler([](const std::string&) { return Result<ExecResult>(ExecResult{"", "", 0}); });
    int asked = 0;
    request_.job.stop_requested = [&asked] { return ++asked == 3; };
    Result<int> rc = build_image_remotely(session, request_, [](const std::string&) {});
    ASSERT_FALSE(rc.ok());
    EXPECT_NE(rc.error().find("stopped following the build"), std::string::npos) << rc.error();
    EXPECT_EQ(asked, 3);
    EXPECT_EQ(session.commands().size(), 1u);  // nothing was sent to stop it
}

TEST(RemoteImport, EnrootImportRunsDetachedAndStreams) {
    FakeSession session;
    session.set_exec_handler([&session](const std::string&) {
        session.put_file("/home/u/slipway/images/i1/import.log", "[INFO] Creating squashfs filesystem...\n");
        session.put_file("/home/u/slipway/images/i1/import.rc", "0\n");
        return Result<ExecResult>(ExecResult{"", "", 0});
    });
    RemoteImportRequest request;
    request.dir = "/home/u/slipway/images/i1";
    request.image = "slipway/demo:1";
    request.sqsh = "/home/u/slipway/demo.sqsh";
    request.job.poll_interval = std::chrono::milliseconds(0);
    std::vector<std::string> lines;
    Result<int> rc =
        import_image_remotely(session, request, [&](const std::string& l) { lines.push_back(l); });
    ASSERT_TRUE(rc.ok()) << rc.error();
    EXPECT_EQ(*rc, 0);
    EXPECT_EQ(lines, std::vector<std::string>{"[INFO] Creating squashfs filesystem..."});
    ASSERT_EQ(session.commands().size(), 1u);
    const std::string& start = session.commands()[0];
    EXPECT_EQ(start.rfind("cd /home/u/slipway/images/i1 && nohup sh -c '", 0), 0u) << start;
    EXPECT_NE(
        start.find("(enroot import -o /home/u/slipway/demo.sqsh dockerd://slipway/demo:1) > import.log"),
        std::string::npos)
        << start;
    request.image = "$(reboot)";
    EXPECT_FALSE(import_image_remotely(session, request, [](const std::string&) {}).ok());
    EXPECT_EQ(session.commands().size(), 1u);
}

}  // namespace
}  // namespace slipway::remote
