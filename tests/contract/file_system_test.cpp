// write_file_atomically and AtomicFile against the fault-injecting FileSystem: a full disk, a failing
// fsync, close, rename or folder fsync leave the old file intact and no temporary behind, and say which
// file; a crash after a successful write keeps every byte (it was fsynced, then renamed, then the folder
// fsynced); the SLIPWAY_FS_FAULT syntax.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "contract/faulty_file_system.h"
#include "contract/file_system.h"

namespace {

namespace fs = std::filesystem;
using slipway::FaultyFileSystem;
using Operation = slipway::FaultyFileSystem::Operation;

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

class FileSystemTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("slipway_fs_test_" + std::to_string(getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        path_ = (dir_ / "config.json").string();
        std::ofstream(path_) << "old contents\n";
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Everything in the folder: the old file and nothing else means the failure cleaned up.
    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(dir_))
            names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

    fs::path dir_;
    std::string path_;
    const std::string payload_ = std::string(3000, 'x') + "\n";
};

TEST_F(FileSystemTest, WritesDurablyInOrder) {
    FaultyFileSystem faulty;
    ASSERT_TRUE(slipway::write_file_atomically(path_, payload_, faulty).ok());
    EXPECT_EQ(slurp(path_), payload_);
    EXPECT_EQ(entries(), std::vector<std::string>{"config.json"});
    // fsync of the data, then close, then rename, then fsync of the folder: the order that survives a crash.
    // (The file it replaces gives its mode: set_mode before any byte is written.)
    const std::vector<std::string> ops = faulty.operations();
    ASSERT_EQ(ops.size(), 7u) << testing::PrintToString(ops);
    const std::string temporary = ops[0].substr(7);
    EXPECT_EQ(ops[0].rfind("create " + path_ + ".tmp.", 0), 0u) << ops[0];
    EXPECT_EQ(ops[1], "set_mode " + temporary);
    EXPECT_EQ(ops[2], "append " + temporary + " 3001");
    EXPECT_EQ(ops[3], "sync " + temporary);
    EXPECT_EQ(ops[4], "close " + temporary);
    EXPECT_EQ(ops[5], "rename " + temporary + " " + path_);
    EXPECT_EQ(ops[6], "sync_dir " + dir_.string());
    EXPECT_TRUE(faulty.unsynced_renames().empty());
    faulty.crash();  // nothing unsynced to lose
    EXPECT_EQ(slurp(path_), payload_);
}

TEST_F(FileSystemTest, FullDiskLeavesTheOldFileAndNoTemporary) {
    for (const uint64_t room : {0u, 1u, 2999u}) {
        FaultyFileSystem faulty;
        faulty.fill_disk_after(room);
        const slipway::Status s = slipway::write_file_atomically(path_, payload_, faulty);
        ASSERT_FALSE(s.ok()) << room;
        EXPECT_NE(s.message().find(path_ + ": not written"), std::string::npos) << s.message();
        EXPECT_NE(s.message().find("No space left on device"), std::string::npos) << s.message();
        EXPECT_EQ(slurp(path_), "old contents\n") << room;
        EXPECT_EQ(entries(), std::vector<std::string>{"config.json"}) << room;
    }
}

TEST_F(FileSystemTest, EachFailingStepIsReportedAndCleanedUp) {
    for (const Operation op : {Operation::kCreate, Operation::kSync, Operation::kClose, Operation::kRename}) {
        FaultyFileSystem faulty;
        faulty.fail(op, "config.json");
        const slipway::Status s = slipway::write_file_atomically(path_, payload_, faulty);
        ASSERT_FALSE(s.ok()) << static_cast<int>(op);
        EXPECT_NE(s.message().find(path_), std::string::npos) << s.message();
        EXPECT_NE(s.message().find("Input/output error"), std::string::npos) << s.message();
        EXPECT_EQ(slurp(path_), "old contents\n") << s.message();
        EXPECT_EQ(entries(), std::vector<std::string>{"config.json"}) << s.message();
    }
    // The folder's fsync fails after the rename: the new file is in place, and the caller hears of it.
    FaultyFileSystem faulty;
    faulty.fail(Operation::kSyncDir, dir_.string());
    const slipway::Status s = slipway::write_file_atomically(path_, payload_, faulty);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(path_ + ": written, but its folder could not be synced"), std::string::npos)
        << s.message();
    EXPECT_EQ(faulty.unsynced_renames().size(), 1u);
}

TEST_F(FileSystemTest, CrashDropsWhatWasNeverSynced) {
    // The fault system's crash model itself: bytes after the last fsync are lost, synced ones stay.
    FaultyFileSystem faulty;
    const std::string raw = (dir_ / "raw.bin").string();
    auto file = faulty.create_file(raw, 0644);
    ASSERT_TRUE(file.ok()) << file.error();
    ASSERT_TRUE((*file)->append("kept").ok());
    ASSERT_TRUE((*file)->sync().ok());
    ASSERT_TRUE((*file)->append(" lost").ok());
    ASSERT_TRUE((*file)->close().ok());
    EXPECT_EQ(slurp(raw), "kept lost");
    faulty.crash();
    EXPECT_EQ(slurp(raw), "kept");
}

TEST_F(FileSystemTest, StreamingFileCommitsOrVanishes) {
    FaultyFileSystem faulty;
    {
        auto file = slipway::AtomicFile::create(path_, {}, faulty);
        ASSERT_TRUE(file.ok()) << file.error();
        ASSERT_TRUE(file->append("half").ok());
        EXPECT_TRUE(fs::exists(file->temporary_path()));
    }  // dropped before commit
    EXPECT_EQ(slurp(path_), "old contents\n");
    EXPECT_EQ(entries(), std::vector<std::string>{"config.json"});

    auto file = slipway::AtomicFile::create(path_, {}, faulty);
    ASSERT_TRUE(file.ok());
    for (int i = 0; i < 3; ++i)
        ASSERT_TRUE(file->append(std::string(1 << 20, static_cast<char>('a' + i))).ok());  // past the buffer
    EXPECT_EQ(file->bytes_written(), 3u << 20);
    ASSERT_TRUE(file->commit().ok());
    EXPECT_EQ(fs::file_size(path_), 3u << 20);
    faulty.crash();
    EXPECT_EQ(fs::file_size(path_), 3u << 20) << "every byte was fsynced before the rename";
}

TEST_F(FileSystemTest, TornFileKeepsItsHead) {
    FaultyFileSystem faulty;
    faulty.tear_after(10, "config.json");
    ASSERT_TRUE(slipway::write_file_atomically(path_, payload_, faulty).ok()) << "a torn write looks fine";
    EXPECT_EQ(slurp(path_), payload_.substr(0, 10));
}

TEST_F(FileSystemTest, ExactModeForPrivateFiles) {
    const mode_t old_mask = umask(0);
    slipway::AtomicWriteOptions private_file;
    private_file.mode = 0600;
    const slipway::Status s = slipway::write_file_atomically(path_, "secret", private_file);
    umask(old_mask);
    ASSERT_TRUE(s.ok()) << s.message();
    struct stat info {};
    ASSERT_EQ(stat(path_.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST_F(FileSystemTest, MissingFolderIsNamed) {
    const std::string nowhere = (dir_ / "no" / "such" / "run.json").string();
    const slipway::Status s = slipway::write_file_atomically(nowhere, "{}");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(nowhere + ": not written"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("No such file or directory"), std::string::npos) << s.message();
}

TEST_F(FileSystemTest, CopyIsWholeOrAbsent) {
    const std::string copy = (dir_ / "copy.json").string();
    ASSERT_TRUE(slipway::copy_file_atomically(path_, copy).ok());
    EXPECT_EQ(slurp(copy), "old contents\n");
    FaultyFileSystem faulty;
    faulty.fill_disk_after(3);
    const std::string partial = (dir_ / "partial.json").string();
    EXPECT_FALSE(slipway::copy_file_atomically(path_, partial, faulty).ok());
    EXPECT_FALSE(fs::exists(partial));
    const slipway::Status missing = slipway::copy_file_atomically((dir_ / "none.json").string(), copy);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(
        missing.message().find(copy + ": cannot copy (" + (dir_ / "none.json").string() + ": cannot read"),
        std::string::npos)
        << missing.message();
    EXPECT_EQ(slurp(copy), "old contents\n");
}

TEST_F(FileSystemTest, ReplacingAFileKeepsItsMode) {
    fs::permissions(path_, fs::perms::owner_read | fs::perms::owner_write);
    ASSERT_TRUE(slipway::write_file_atomically(path_, payload_).ok());
    EXPECT_EQ(fs::status(path_).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write)
        << "a private file stays private";
    EXPECT_EQ(slurp(path_), payload_);
}

TEST_F(FileSystemTest, ReadingAFolderIsAnErrorNotAnEmptyFile) {
    const slipway::Result<std::string> folder = slipway::read_file(dir_.string());
    ASSERT_FALSE(folder.ok());
    EXPECT_NE(folder.error().find(dir_.string() + ": not a regular file"), std::string::npos)
        << folder.error();
    const std::string copy = (dir_ / "copy.json").string();
    EXPECT_FALSE(slipway::copy_file_atomically(dir_.string(), copy).ok());
    EXPECT_FALSE(fs::exists(copy)) << "no empty copy";
    const slipway::Result<std::string> whole = slipway::read_file(path_);
    ASSERT_TRUE(whole.ok()) << whole.error();
    EXPECT_EQ(*whole, "old contents\n");
}

TEST_F(FileSystemTest, FaultSpecSyntax) {
    auto faulty = FaultyFileSystem::from_spec("enospc_after_bytes:5:config,fail_rename:other.json");
    ASSERT_TRUE(faulty.ok()) << faulty.error();
    const slipway::Status full = slipway::write_file_atomically(path_, payload_, **faulty);
    EXPECT_NE(full.message().find("No space left on device"), std::string::npos) << full.message();
    const std::string other = (dir_ / "other.json").string();
    const slipway::Status renamed = slipway::write_file_atomically(other, "{}", **faulty);
    EXPECT_NE(renamed.message().find("cannot rename"), std::string::npos) << renamed.message();
    EXPECT_TRUE(slipway::write_file_atomically((dir_ / "third.json").string(), "{}", **faulty).ok());
    for (const char* bad : {"enospc_after_bytes:x", "fail_sync", "torn_after_bytes:-1:a", "explode:1"}) {
        auto refused = FaultyFileSystem::from_spec(bad);
        ASSERT_FALSE(refused.ok()) << bad;
        EXPECT_NE(refused.error().find(std::string("\"") + bad + "\""), std::string::npos) << refused.error();
    }
}

}  // namespace
