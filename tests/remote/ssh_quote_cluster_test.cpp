// Adversarial names through the real sshd (label cluster): values with quotes, $(), backticks, ;,
// newlines, spaces and Unicode go through shell_quote into exec, and through SFTP as paths and folder
// listings; nothing executes (canary files stay absent) and every value arrives intact.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "remote/ssh/libssh_session.h"
#include "remote/ssh/shell_quote.h"
#include "ssh_cluster_env.h"

namespace slipway::remote {
namespace {

using std::chrono::milliseconds;

std::vector<std::string> adversarial_values(const std::string& canary) {
    return {
        "it's",
        "say \"hi\"",
        "$(touch /tmp/pwned)",
        "$(touch " + canary + ")",
        "`touch " + canary + "`",
        "x; touch " + canary,
        "x && touch " + canary + " || touch " + canary,
        "first line\ntouch " + canary + "\n",
        "   leading and trailing spaces   ",
        "Привет мир ✓ 日本語 🚀",
        "$HOME ${PATH} $$ $0",
        "back\\slash \\' \\\"",
        "*?[a-z]",
        "-rf",
        "'; touch " + canary + "; echo '",
        "\"; touch " + canary + "; echo \"",
        "a|b&c>d<e(f)g{h}",
        "tab\there\rcarriage",
        "!hist #comment ~tilde",
    };
}

class SshQuoteCluster : public ::testing::Test {
protected:
    void SetUp() override {
        env_ = testing::ClusterEnv::load();
        if (!env_) GTEST_SKIP() << "local cluster not running (SLIPWAY_CLUSTER_ENV not set)";
        auto session = connect_ssh(env_->connect_options());
        ASSERT_TRUE(session.ok()) << session.error();
        session_ = std::move(*session);
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = (*env_)["SLIPWAY_REMOTE_DIR"] + "/quote-" + test->name() + "-" + std::to_string(::getpid());
        canary_ = dir_ + "-canary";
        ASSERT_TRUE(session_->mkdir_p(dir_).ok());
        // /tmp/pwned is a name the values use; it must not be left from an earlier run (the remote host is
        // this machine).
        std::filesystem::remove("/tmp/pwned");
    }
    void TearDown() override {
        if (session_) {
            EXPECT_FALSE(session_->stat(canary_)->exists) << "a value was executed: " << canary_ << " exists";
            EXPECT_FALSE(session_->stat("/tmp/pwned")->exists) << "a value was executed: /tmp/pwned exists";
            session_->exec(*shell_command({"rm", "-rf", dir_}), milliseconds(10000));
        }
    }

    std::optional<testing::ClusterEnv> env_;
    std::unique_ptr<Session> session_;
    std::string dir_;
    std::string canary_;
};

TEST_F(SshQuoteCluster, ExecEchoesEveryValueIntact) {
    for (const std::string& value : adversarial_values(canary_)) {
        auto command = shell_command({"printf", "%s", value});
        ASSERT_TRUE(command.ok()) << command.error();
        auto result = session_->exec(*command, milliseconds(10000));
        ASSERT_TRUE(result.ok()) << result.error();
        EXPECT_EQ(result->exit_status, 0) << result->err;
        EXPECT_EQ(result->out, value) << "sent as: " << *command;
    }
}

TEST_F(SshQuoteCluster, PathsThroughSftpAndShellAgree) {
    int index = 0;
    for (const std::string& value : adversarial_values(canary_)) {
        // '/' would make a value a path with folders; keep one name per value.
        std::string name = value;
        for (char& c : name) {
            if (c == '/') c = '_';
        }
        name = std::to_string(index++) + name;
        const std::string folder = dir_ + "/" + name;
        // Created by a shell command, seen by SFTP.
        auto mkdir = session_->exec(*shell_command({"mkdir", "-p", "--", folder}), milliseconds(10000));
        ASSERT_TRUE(mkdir.ok()) << mkdir.error();
        ASSERT_EQ(mkdir->exit_status, 0) << mkdir->err;
        auto stat = session_->stat(folder);
        ASSERT_TRUE(stat.ok()) << stat.error();
        EXPECT_TRUE(stat->is_dir) << "shell-created folder not found by SFTP: " << name;

        // Written by SFTP (under a name with the value), read back by a shell command.
        const std::string file = folder + "/" + name + ".txt";
        ASSERT_TRUE(session_->upload_bytes(value, file, 0640).ok()) << name;
        auto cat = session_->exec(*shell_command({"cat", "--", file}), milliseconds(10000));
        ASSERT_TRUE(cat.ok()) << cat.error();
        EXPECT_EQ(cat->out, value) << name;
        // And mkdir_p of a nested folder with the value in it.
        ASSERT_TRUE(session_->mkdir_p(folder + "/" + name + "/again").ok()) << name;
        auto test_dir = session_->exec(*shell_command({"test", "-d", folder + "/" + name + "/again"}),
                                       milliseconds(10000));
        EXPECT_EQ(test_dir->exit_status, 0) << name;
    }
}

// Files named after every value, created by the shell; list_directory (SFTP) must return each name byte for
// byte, with nothing executed on the way.
TEST_F(SshQuoteCluster, ListDirectoryReturnsEveryNameIntact) {
    std::vector<std::string> expected;
    for (std::string name : adversarial_values(canary_)) {
        for (char& c : name) {
            if (c == '/') c = '_';
        }
        auto touch = session_->exec(*shell_command({"touch", "--", dir_ + "/" + name}), milliseconds(10000));
        ASSERT_TRUE(touch.ok()) << touch.error();
        ASSERT_EQ(touch->exit_status, 0) << touch->err;
        expected.push_back(name);
    }
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());

    auto listed = session_->list_directory(dir_);
    ASSERT_TRUE(listed.ok()) << listed.error();
    std::vector<std::string> names;
    for (const RemoteDirEntry& entry : *listed) {
        names.push_back(entry.name);
        EXPECT_EQ(entry.type, RemoteEntryType::kFile) << entry.name;
        EXPECT_EQ(entry.size, 0u) << entry.name;
    }
    EXPECT_EQ(names, expected);
}

}  // namespace
}  // namespace slipway::remote
