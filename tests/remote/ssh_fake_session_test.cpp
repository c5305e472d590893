// Unit tests of FakeSession, the fault-injection Session other remote/ tests build on: scripted
// commands, the in-memory file system, and injected timeouts, dropped connections and auth failures.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "remote/ssh/fake_session.h"

namespace slipway::remote {
namespace {

using std::chrono::milliseconds;

TEST(FakeSession, ScriptedResponsesInOrderThenRulesThenHandler) {
    FakeSession fake;
    fake.queue_exec(ExecResult{"first\n", "", 0});
    fake.on_exec_prefix("squeue", ExecResult{"42\n", "", 0});
    fake.set_exec_handler([](const std::string& command) -> Result<ExecResult> {
        return ExecResult{"", "unknown: " + command, 127};
    });
    auto first = fake.exec("squeue -h", milliseconds(100));
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first->out, "first\n");  // the queue wins over the rule
    auto second = fake.exec("squeue -h", milliseconds(100));
    EXPECT_EQ(second->out, "42\n");
    auto third = fake.exec("sinfo", milliseconds(100));
    EXPECT_EQ(third->exit_status, 127);
    EXPECT_EQ(third->err, "unknown: sinfo");
    EXPECT_EQ(fake.commands(), (std::vector<std::string>{"squeue -h", "squeue -h", "sinfo"}));
}

TEST(FakeSession, UnscriptedCommandIsAnErrorNamingIt) {
    FakeSession fake;
    auto result = fake.exec("scancel 7", milliseconds(100));
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().find("scancel 7"), std::string::npos);
}

TEST(FakeSession, NonZeroExitIsAResultNotAnError) {
    FakeSession fake;
    fake.queue_exec(ExecResult{"", "sbatch: error: invalid partition", 1});
    auto result = fake.exec("sbatch x", milliseconds(100));
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->exit_status, 1);
}

TEST(FakeSession, InjectedTimeoutFailsOnceThenWorks) {
    FakeSession fake;
    fake.on_exec_prefix("", ExecResult{"ok", "", 0});
    fake.fail_next(FakeFault::kTimeout);
    auto timed_out = fake.exec("squeue", milliseconds(10));
    ASSERT_FALSE(timed_out.ok());
    EXPECT_EQ(timed_out.code(), StatusCode::kTimeout);
    EXPECT_TRUE(fake.is_connected());
    EXPECT_TRUE(fake.exec("squeue", milliseconds(10)).ok());
}

TEST(FakeSession, DroppedConnectionFailsEverythingUntilReconnect) {
    FakeSession fake;
    fake.put_file("log.txt", "a\n");
    fake.on_exec_prefix("", ExecResult{"ok", "", 0});
    fake.fail_next(FakeFault::kDropConnection);
    EXPECT_EQ(fake.read_range("log.txt", 0, 10).code(), StatusCode::kUnavailable);
    EXPECT_FALSE(fake.is_connected());
    EXPECT_EQ(fake.exec("squeue", milliseconds(10)).code(), StatusCode::kUnavailable);
    EXPECT_EQ(fake.stat("log.txt").code(), StatusCode::kUnavailable);
    ASSERT_TRUE(fake.reconnect().ok());
    EXPECT_EQ(fake.reconnect_count(), 1);
    EXPECT_EQ(*fake.read_range("log.txt", 0, 10), "a\n");

    fake.drop_connection();
    EXPECT_EQ(fake.upload_bytes("x", "y", 0644).code(), StatusCode::kUnavailable);
}

TEST(FakeSession, AuthFailureOnReconnect) {
    FakeSession fake;
    fake.drop_connection();
    fake.fail_next(FakeFault::kAuthFailure, 2);
    EXPECT_EQ(fake.reconnect().code(), StatusCode::kAuthFailed);
    EXPECT_FALSE(fake.is_connected());
    EXPECT_EQ(fake.reconnect().code(), StatusCode::kAuthFailed);
    EXPECT_TRUE(fake.reconnect().ok());
    EXPECT_TRUE(fake.is_connected());
}

TEST(FakeSession, FileSystemReadRangeStatAndMissingFiles) {
    FakeSession fake;
    EXPECT_EQ(fake.read_range("slurm-5.out", 0, 100).code(), StatusCode::kNotFound);
    auto missing = fake.stat("slurm-5.out");
    ASSERT_TRUE(missing.ok());
    EXPECT_FALSE(missing->exists);

    fake.append_file("slurm-5.out", "hello ");
    fake.append_file("slurm-5.out", "world\n");
    EXPECT_EQ(*fake.read_range("slurm-5.out", 6, 100), "world\n");
    EXPECT_EQ(*fake.read_range("slurm-5.out", 0, 5), "hello");
    EXPECT_EQ(*fake.read_range("slurm-5.out", 99, 5), "");
    auto stat = fake.stat("slurm-5.out");
    EXPECT_TRUE(stat->exists);
    EXPECT_EQ(stat->size, 12u);
    EXPECT_FALSE(stat->is_dir);
}

TEST(FakeSession, UploadMkdirRemoveAndDownload) {
    FakeSession fake;
    ASSERT_TRUE(fake.mkdir_p("/work/runs/r1/").ok());
    EXPECT_TRUE(fake.stat("/work/runs")->is_dir);
    ASSERT_TRUE(fake.upload_bytes("#!/bin/bash\n", "/work/runs/r1/job.sbatch", 0750).ok());
    EXPECT_EQ(fake.mode("/work/runs/r1/job.sbatch"), 0750u);
    EXPECT_FALSE(fake.mkdir_p("/work/runs/r1/job.sbatch/x").ok());  // a file is in the way
    EXPECT_FALSE(fake.remove("/work/runs/r1").ok());                // not empty
    ASSERT_TRUE(fake.remove("/work/runs/r1/job.sbatch").ok());
    EXPECT_TRUE(fake.remove("/work/runs/r1/job.sbatch").ok());  // already gone is fine
    ASSERT_TRUE(fake.remove("/work/runs/r1").ok());

    const auto local =
        std::filesystem::temp_directory_path() / ("fake_session_test_" + std::to_string(::getpid()));
    fake.put_file("remote.txt", "payload");
    ASSERT_TRUE(fake.download_file("remote.txt", local.string()).ok());
    std::ifstream in(local);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "payload");
    ASSERT_TRUE(fake.upload_file(local.string(), "copy.txt", 0600).ok());
    EXPECT_EQ(fake.file("copy.txt"), "payload");
    std::filesystem::remove(local);
    EXPECT_EQ(fake.download_file("missing", local.string()).code(), StatusCode::kNotFound);
}

TEST(FakeSession, ListDirectoryEntriesLinksImpliedFoldersAndErrors) {
    FakeSession fake;
    fake.put_dir("/runs", 0750);
    fake.put_file("/runs/b.out", "12345", 0640);
    fake.put_file("/runs/a b/run.json", "{}");  // "a b" exists only as a parent
    fake.put_dir("/runs/output");
    fake.put_file("/runs/output/x", "x");
    fake.put_symlink("/runs/latest", "output");
    auto listed = fake.list_directory("/runs/");
    ASSERT_TRUE(listed.ok()) << listed.error();
    ASSERT_EQ(listed->size(), 4u);
    EXPECT_EQ((*listed)[0].name, "a b");
    EXPECT_EQ((*listed)[0].type, RemoteEntryType::kDirectory);
    EXPECT_EQ((*listed)[1].name, "b.out");
    EXPECT_EQ((*listed)[1].type, RemoteEntryType::kFile);
    EXPECT_EQ((*listed)[1].size, 5u);
    EXPECT_EQ((*listed)[1].mode, 0640u);
    EXPECT_GT((*listed)[1].mtime, 0);
    EXPECT_EQ((*listed)[2].name, "latest");
    EXPECT_EQ((*listed)[2].type, RemoteEntryType::kSymlink);
    EXPECT_EQ((*listed)[3].name, "output");
    EXPECT_TRUE(fake.stat("/runs/latest")->is_dir);  // stat follows the link
    auto through_link = fake.list_directory("/runs/latest");
    ASSERT_TRUE(through_link.ok()) << through_link.error();
    ASSERT_EQ(through_link->size(), 1u);
    EXPECT_EQ((*through_link)[0].name, "x");

    auto missing = fake.list_directory("/nowhere");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
    EXPECT_NE(missing.error().find("/nowhere"), std::string::npos) << missing.error();
    auto file = fake.list_directory("/runs/b.out");
    ASSERT_FALSE(file.ok());
    EXPECT_NE(file.error().find("/runs/b.out"), std::string::npos) << file.error();
    EXPECT_NE(file.error().find("not a folder"), std::string::npos) << file.error();

    fake.fail_next(FakeFault::kTimeout);
    auto timed_out = fake.list_directory("/runs");
    ASSERT_FALSE(timed_out.ok());
    EXPECT_EQ(timed_out.status().code(), StatusCode::kTimeout);
    fake.drop_connection();
    EXPECT_EQ(fake.list_directory("/runs").status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace slipway::remote
