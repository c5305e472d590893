// SFTP through the libssh Session against the real test sshd (label cluster): upload (temporary name,
// rename, mode kept, overwrite), download, stat, read_range (incl. a missing file), folder listings,
// mkdir -p, remove.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "remote/ssh/libssh_session.h"
#include "remote/ssh/shell_quote.h"
#include "ssh_cluster_env.h"

namespace slipway::remote {
namespace {

using std::chrono::milliseconds;

class SshSftpCluster : public ::testing::Test {
protected:
    void SetUp() override {
        env_ = testing::ClusterEnv::load();
        if (!env_) GTEST_SKIP() << "local cluster not running (SLIPWAY_CLUSTER_ENV not set)";
        auto session = connect_ssh(env_->connect_options());
        ASSERT_TRUE(session.ok()) << session.error();
        session_ = std::move(*session);
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = (*env_)["SLIPWAY_REMOTE_DIR"] + "/sftp-" + test->name() + "-" + std::to_string(::getpid());
        ASSERT_TRUE(session_->mkdir_p(dir_).ok());
    }
    void TearDown() override {
        if (session_ && session_->is_connected())
            session_->exec(*shell_command({"rm", "-rf", dir_}), milliseconds(10000));
    }

    std::optional<testing::ClusterEnv> env_;
    std::unique_ptr<Session> session_;
    std::string dir_;
};

std::string random_bytes(std::size_t size) {
    std::mt19937 rng(1234);
    std::string bytes(size, '\0');
    for (char& c : bytes)
        c = static_cast<char>(rng() & 0xff);
    return bytes;
}

TEST_F(SshSftpCluster, UploadKeepsModeDownloadRoundTrips) {
    const std::string payload = random_bytes(1 << 20);
    const std::string remote = dir_ + "/engine.bin";
    ASSERT_TRUE(session_->upload_bytes(payload, remote, 0750).ok());
    auto stat = session_->stat(remote);
    ASSERT_TRUE(stat.ok()) << stat.error();
    EXPECT_TRUE(stat->exists);
    EXPECT_FALSE(stat->is_dir);
    EXPECT_EQ(stat->size, payload.size());
    EXPECT_EQ(stat->mode, 0750u);
    EXPECT_GT(stat->mtime, 1600000000);
    // The server agrees on mode and content.
    auto remote_view = session_->exec(*shell_command({"stat", "-c", "%a %s", remote}), milliseconds(10000));
    EXPECT_EQ(remote_view->out, "750 1048576\n");

    const std::string local_dir = testing::make_local_temp_dir("sftp");
    const std::string local = local_dir + "/downloaded.bin";
    ASSERT_TRUE(session_->download_file(remote, local).ok());
    std::ifstream in(local, std::ios::binary);
    const std::string downloaded((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(downloaded == payload) << "downloaded " << downloaded.size() << " bytes";

    // upload_file, replacing the existing file (rename over it), with another mode.
    std::ofstream(local_dir + "/run.json") << "{\"name\": \"r\"}";
    {
        Status replaced = session_->upload_file(local_dir + "/run.json", remote, 0600);
        ASSERT_TRUE(replaced.ok()) << replaced.message();
    }
    EXPECT_EQ(session_->stat(remote)->mode, 0600u);
    EXPECT_EQ(*session_->read_range(remote, 0, 100), "{\"name\": \"r\"}");
    // No temporary file is left beside it.
    auto listing = session_->exec(*shell_command({"ls", "-A", dir_}), milliseconds(10000));
    EXPECT_EQ(listing->out, "engine.bin\n");
    std::filesystem::remove_all(local_dir);
}

TEST_F(SshSftpCluster, ReadRangeFollowsAGrowingFileAndReportsMissing) {
    const std::string log = dir_ + "/slurm-1.out";
    auto missing = session_->read_range(log, 0, 100);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.error();
    auto stat = session_->stat(log);
    ASSERT_TRUE(stat.ok());
    EXPECT_FALSE(stat->exists);

    ASSERT_EQ(
        session_->exec("printf 'line1\\nline2\\n' > " + *shell_quote(log), milliseconds(10000))->exit_status,
        0);
    EXPECT_EQ(*session_->read_range(log, 0, 6), "line1\n");
    EXPECT_EQ(*session_->read_range(log, 6, 1000), "line2\n");
    EXPECT_EQ(*session_->read_range(log, 12, 1000), "");
    EXPECT_EQ(*session_->read_range(log, 500, 1000), "");
    session_->exec("printf 'line3\\n' >> " + *shell_quote(log), milliseconds(10000));
    EXPECT_EQ(*session_->read_range(log, 12, 1000), "line3\n");
    // More than one SFTP read's worth.
    Status big = session_->upload_bytes(random_bytes(200000), log, 0644);
    ASSERT_TRUE(big.ok()) << big.message();
    EXPECT_EQ(session_->read_range(log, 1000, 150000)->size(), 150000u);
}

TEST_F(SshSftpCluster, MkdirPRemoveAndErrors) {
    const std::string nested = dir_ + "/a/b/c";
    ASSERT_TRUE(session_->mkdir_p(nested, 0750).ok());
    ASSERT_TRUE(session_->mkdir_p(nested).ok());  // existing is fine
    auto stat = session_->stat(nested);
    EXPECT_TRUE(stat->is_dir);
    EXPECT_EQ(stat->mode, 0750u);

    ASSERT_TRUE(session_->upload_bytes("x", dir_ + "/a/file", 0644).ok());
    auto through_file = session_->mkdir_p(dir_ + "/a/file/sub");
    ASSERT_FALSE(through_file.ok());
    EXPECT_NE(through_file.message().find("is a file"), std::string::npos) << through_file.message();

    auto no_folder = session_->upload_bytes("x", dir_ + "/missing/file", 0644);
    ASSERT_FALSE(no_folder.ok());
    EXPECT_NE(no_folder.message().find(dir_ + "/missing"), std::string::npos) << no_folder.message();

    EXPECT_FALSE(session_->remove(dir_ + "/a").ok());  // not empty
    ASSERT_TRUE(session_->remove(dir_ + "/a/file").ok());
    ASSERT_TRUE(session_->remove(dir_ + "/a/file").ok());  // gone already
    ASSERT_TRUE(session_->remove(nested).ok());
    EXPECT_FALSE(session_->stat(nested)->exists);

    auto forbidden = session_->upload_bytes("x", "/etc/slipway-should-not-exist", 0644);
    ASSERT_FALSE(forbidden.ok());
    EXPECT_NE(forbidden.message().find("permission denied"), std::string::npos) << forbidden.message();
}

TEST_F(SshSftpCluster, HomeRelativePaths) {
    auto home = session_->stat("~");
    ASSERT_TRUE(home.ok()) << home.error();
    EXPECT_TRUE(home->is_dir);
    const std::string name = "slipway-home-test-" + std::to_string(::getpid());
    ASSERT_TRUE(session_->upload_bytes("home", "~/" + name, 0644).ok());
    EXPECT_TRUE(session_->stat((*env_)["SLIPWAY_TEST_USER_HOME"] + "/" + name)->exists);
    ASSERT_TRUE(session_->remove("~/" + name).ok());
}

TEST_F(SshSftpCluster, ListDirectoryTypesSizesModesAndErrors) {
    ASSERT_TRUE(session_->upload_bytes("12345", dir_ + "/b.txt", 0640).ok());
    ASSERT_TRUE(session_->mkdir_p(dir_ + "/a-folder", 0750).ok());
    auto link =
        session_->exec(*shell_command({"ln", "-s", "a-folder", dir_ + "/c-link"}), milliseconds(10000));
    ASSERT_TRUE(link.ok() && link->exit_status == 0);
    const auto before = std::chrono::system_clock::now() - std::chrono::minutes(5);

    auto listed = session_->list_directory(dir_);
    ASSERT_TRUE(listed.ok()) << listed.error();
    ASSERT_EQ(listed->size(), 3u);  // no "." or ".."
    const RemoteDirEntry& folder = (*listed)[0];
    const RemoteDirEntry& file = (*listed)[1];
    const RemoteDirEntry& symlink = (*listed)[2];
    EXPECT_EQ(folder.name, "a-folder");
    EXPECT_EQ(folder.type, RemoteEntryType::kDirectory);
    EXPECT_EQ(folder.mode, 0750u);
    EXPECT_EQ(file.name, "b.txt");
    EXPECT_EQ(file.type, RemoteEntryType::kFile);
    EXPECT_EQ(file.size, 5u);
    EXPECT_EQ(file.mode, 0640u);
    EXPECT_GE(file.mtime, std::chrono::system_clock::to_time_t(before));
    EXPECT_EQ(symlink.name, "c-link");
    EXPECT_EQ(symlink.type, RemoteEntryType::kSymlink);  // not followed
    EXPECT_TRUE(session_->stat(dir_ + "/c-link")->is_dir);

    // Through a link, empty, and more entries than one SFTP readdir reply holds.
    auto empty = session_->list_directory(dir_ + "/c-link");
    ASSERT_TRUE(empty.ok()) << empty.error();
    EXPECT_TRUE(empty->empty());
    auto many = session_->exec("cd " + *shell_quote(dir_ + "/a-folder") + " && touch $(seq -f 'f%04g' 1 700)",
                               milliseconds(20000));
    ASSERT_TRUE(many.ok() && many->exit_status == 0);
    auto big = session_->list_directory(dir_ + "/a-folder");
    ASSERT_TRUE(big.ok()) << big.error();
    ASSERT_EQ(big->size(), 700u);
    EXPECT_EQ(big->front().name, "f0001");
    EXPECT_EQ(big->back().name, "f0700");

    auto missing = session_->list_directory(dir_ + "/missing");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
    EXPECT_NE(missing.error().find(dir_ + "/missing"), std::string::npos) << missing.error();
    auto not_folder = session_->list_directory(dir_ + "/b.txt");
    ASSERT_FALSE(not_folder.ok());
    EXPECT_NE(not_folder.error().find(dir_ + "/b.txt"), std::string::npos) << not_folder.error();
    EXPECT_NE(not_folder.error().find("not a folder"), std::string::npos) << not_folder.error();
    auto forbidden = session_->list_directory("/root");
    ASSERT_FALSE(forbidden.ok());
    EXPECT_NE(forbidden.error().find("/root"), std::string::npos) << forbidden.error();

    auto home = session_->list_directory("~");
    ASSERT_TRUE(home.ok()) << home.error();
}

}  // namespace
}  // namespace slipway::remote
