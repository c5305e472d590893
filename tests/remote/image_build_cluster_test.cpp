// The remote image build against the real test sshd (label cluster): the detached build started through a
// real shell, its log streamed while it runs and its exit status read back. The test host has no working
// Docker daemon (no docker at all, or a client without a daemon), so the build fails in a known way that
// proves the mechanics: upload, context unpacking, nohup sh -c with quoted arguments, build.log, build.rc.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "remote/container/image_build.h"
#include "remote/ssh/libssh_session.h"
#include "ssh_cluster_env.h"

namespace slipway::remote {
namespace {

using testing::ClusterEnv;

TEST(ImageBuildCluster, DetachedBuildStreamsItsLogAndExitStatus) {
    std::optional<ClusterEnv> env = ClusterEnv::load();
    if (!env) GTEST_SKIP() << "SLIPWAY_CLUSTER_ENV is not set: run through ctest (local_cluster)";
    if (testing::run_local("docker info >/dev/null 2>&1 && echo daemon") == "daemon\n")
        GTEST_SKIP()
            << "a Docker daemon runs here: this test expects none (it would try to pull the NGC base)";
    Result<std::unique_ptr<Session>> session = connect_ssh(env->connect_options());
    ASSERT_TRUE(session.ok()) << session.error();

    const std::string local = testing::make_local_temp_dir("context");
    std::ofstream(local + "/README") << "context";
    ASSERT_EQ(std::system(("tar -czf " + local + "/context.tar.gz -C " + local + " README").c_str()), 0);

    RemoteBuildRequest request;
    request.build_dir =
        (*env)["SLIPWAY_REMOTE_DIR"] + "/build it's \"q\" $(touch x) " + std::to_string(::getpid());
    request.dockerfile = "FROM nvcr.io/nvidia/pytorch:24.04-py3\n";
    request.context_tarball = local + "/context.tar.gz";
    request.image = "slipway/test:1";
    request.job.poll_interval = std::chrono::milliseconds(100);
    request.job.timeout = std::chrono::seconds(60);
    std::vector<std::string> lines;
    Result<int> rc =
        build_image_remotely(**session, request, [&](const std::string& l) { lines.push_back(l); });
    ASSERT_TRUE(rc.ok()) << rc.error();
    EXPECT_NE(*rc, 0);
    ASSERT_FALSE(lines.empty());
    std::string log;
    for (const std::string& line : lines)
        log += line + "\n";
    // "sh: 1: docker: not found" (127) without docker; "Cannot connect to the Docker daemon" (1) without a
    // daemon.
    const bool explained = (*rc == 127 && log.find("docker: not found") != std::string::npos) ||
                           log.find("Cannot connect to the Docker daemon") != std::string::npos;
    EXPECT_TRUE(explained) << "exit " << *rc << ", log:\n" << log;
    // The context was unpacked in the build folder before docker was called; nothing ran from the name.
    Result<std::string> readme = (*session)->read_range(request.build_dir + "/context/README", 0, 100);
    ASSERT_TRUE(readme.ok()) << readme.error();
    EXPECT_EQ(*readme, "context");
    Result<RemoteStat> stray = (*session)->stat(request.build_dir + "/x");
    ASSERT_TRUE(stray.ok());
    EXPECT_FALSE(stray->exists);
    std::filesystem::remove_all(local);
}

}  // namespace
}  // namespace slipway::remote
