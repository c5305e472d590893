// Tests of the token cache files: the writer's temporary folder and rename, the reader's checks
// (magic, version, sizes, offsets) with errors naming the file, and removal of killed runs' folders.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "contract/faulty_file_system.h"
#include "data/token_cache.h"
#include "data/token_cache_writer.h"

namespace fs = std::filesystem;

namespace slipway::data {
namespace {

std::string fresh_dir(const std::string& name) {
    const fs::path dir =
        fs::path(testing::TempDir()) / ("slipway-cache-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir.string();
}

// Writes a cache with 10 train tokens in 2 blocks of 4 and 5 validation tokens in 1 block; the first error.
Result<std::string> try_small_cache(const std::string& dir, const std::string& key, FileSystem& fs) {
    Result<TokenCacheWriter> writer = TokenCacheWriter::create(dir, key, fs);
    if (!writer.ok()) return writer.status();
    for (const Status& s : {writer->append_tokens(Split::kTrain, {1, 2, 3, 4, 5}),
                            writer->append_tokens(Split::kTrain, {6, 7, 8, 9, 10}),
                            writer->append_blocks(Split::kTrain, {0, 5}),
                            writer->append_tokens(Split::kValidation, {11, 12, 13, 14, 15}),
                            writer->append_blocks(Split::kValidation, {1})}) {
        if (!s.ok()) return s;
    }
    CacheMeta meta;
    meta.engine_version = "test";
    meta.key = key;
    meta.created = "2024-01-01T00:00:00Z";
    meta.block_size = 4;
    meta.split_mode = "document";
    meta.text_field = "text";
    meta.eos_token_id = 10;
    meta.vocab_size = 100;
    meta.train = {2, 10, 2, 2, 0};
    meta.validation = {1, 5, 1, 1, 0};
    meta.inputs.push_back({"train", "/data/train.jsonl", 123, 456, 0xabcdefull});
    return writer->commit(meta);
}

std::string write_small_cache(const std::string& dir, const std::string& key = "0123456789abcdef") {
    Result<std::string> path = try_small_cache(dir, key, default_file_system());
    EXPECT_TRUE(path.ok()) << path.error();
    return path.ok() ? *path : "";
}

void truncate_file(const std::string& path, uintmax_t size) {
    fs::resize_file(path, size);
}

TEST(TokenCache, ReadsBackWhatWasWritten) {
    const std::string dir = fresh_dir("roundtrip");
    const std::string path = write_small_cache(dir);
    EXPECT_EQ(path, (fs::path(dir) / "0123456789abcdef").string());
    Result<TokenCache> cache = TokenCache::open(path);
    ASSERT_TRUE(cache.ok()) << cache.error();
    EXPECT_EQ(cache->block_size(), 4u);
    ASSERT_EQ(cache->num_blocks(Split::kTrain), 2u);
    EXPECT_EQ(
        std::vector<uint32_t>(cache->block(Split::kTrain, 0).begin(), cache->block(Split::kTrain, 0).end()),
        std::vector<uint32_t>({1, 2, 3, 4}));
    EXPECT_EQ(
        std::vector<uint32_t>(cache->block(Split::kTrain, 1).begin(), cache->block(Split::kTrain, 1).end()),
        std::vector<uint32_t>({6, 7, 8, 9}));
    ASSERT_EQ(cache->num_blocks(Split::kValidation), 1u);
    EXPECT_EQ(cache->block(Split::kValidation, 0)[0], 12u);
    EXPECT_EQ(cache->num_tokens(Split::kTrain), 10u);
    EXPECT_EQ(cache->tokens(Split::kTrain)[9], 10u);
    EXPECT_EQ(cache->meta().eos_token_id, 10);
    EXPECT_EQ(cache->meta().inputs.at(0).xxh64, 0xabcdefull);
    EXPECT_EQ(cache->meta().train.tokens_dropped, 2u);
    // Only the finished folder remains.
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
        ++entries;
    EXPECT_EQ(entries, 1u);
}

TEST(TokenCache, RejectsATruncatedTokensFileNamingIt) {
    const std::string path = write_small_cache(fresh_dir("truncated"));
    truncate_file((fs::path(path) / "train.tokens").string(), 36);
    Result<TokenCache> cache = TokenCache::open(path);
    ASSERT_FALSE(cache.ok());
    EXPECT_NE(cache.error().find("train.tokens: 36 bytes, expected 40"), std::string::npos) << cache.error();
}

TEST(TokenCache, RejectsATruncatedBlocksFileNamingIt) {
    const std::string path = write_small_cache(fresh_dir("truncated-blocks"));
    truncate_file((fs::path(path) / "validation.blocks").string(), 0);
    Result<TokenCache> cache = TokenCache::open(path);
    ASSERT_FALSE(cache.ok());
    EXPECT_NE(cache.error().find("validation.blocks"), std::string::npos) << cache.error();
}

TEST(TokenCache, RejectsAnOffsetPastTheEnd) {
    const std::string path = write_small_cache(fresh_dir("offset"));
    std::fstream blocks((fs::path(path) / "train.blocks").string(),
                        std::ios::in | std::ios::out | std::ios::binary);
    const uint64_t bad = 7;  // 7 + 4 > 10 tokens
    blocks.seekp(8);
    blocks.write(reinterpret_cast<const char*>(&bad), sizeof(bad));
    blocks.close();
    Result<TokenCache> cache = TokenCache::open(path);
    ASSERT_FALSE(cache.ok());
    EXPECT_NE(cache.error().find("train.blocks: block 1 starts at 7"), std::string::npos) << cache.error();
}

TEST(TokenCache, RejectsWrongMagicVersionOrMissingMeta) {
    const std::string path = write_small_cache(fresh_dir("magic"));
    const std::string meta = (fs::path(path) / "meta.json").string();
    std::ifstream in(meta);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();

    {
        nlohmann::json j = nlohmann::json::parse(text);
        j["format_version"] = 99;
        std::ofstream(meta) << j.dump();
    }
    Result<TokenCache> cache = TokenCache::open(path);
    ASSERT_FALSE(cache.ok());
    EXPECT_NE(cache.error().find("format version 99"), std::string::npos) << cache.error();
    {
        nlohmann::json j = nlohmann::json::parse(text);
        j["magic"] = "something.else";
        std::ofstream(meta) << j.dump();
    }
    cache = TokenCache::open(path);
    ASSERT_FALSE(cache.ok());
    EXPECT_NE(cache.error().find("meta.json: not a token cache"), std::string::npos) << cache.error();
    fs::remove(meta);
    cache = TokenCache::open(path);
    ASSERT_FALSE(cache.ok());
    EXPECT_NE(cache.error().find("not a complete token cache"), std::string::npos) << cache.error();
}

TEST(TokenCacheWriter, AbandonedWriterLeavesNothing) {
    const std::string dir = fresh_dir("abandon");
    {
        Result<TokenCacheWriter> writer = TokenCacheWriter::create(dir, "feedfeedfeedfeed");
        ASSERT_TRUE(writer.ok()) << writer.error();
        EXPECT_TRUE(fs::is_directory(writer->temporary_path()));
        EXPECT_NE(writer->temporary_path().find(temporary_suffix()), std::string::npos);
        ASSERT_TRUE(writer->append_tokens(Split::kTrain, {1, 2, 3}).ok());
    }
    EXPECT_TRUE(fs::is_empty(dir));
}

TEST(TokenCacheWriter, StaleTemporaryOfADeadProcessIsRemoved) {
    const std::string dir = fresh_dir("stale");
    const pid_t child = fork();
    if (child == 0) _exit(0);
    int status = 0;
    waitpid(child, &status, 0);  // `child` is now a pid with no process
    const std::string suffix = temporary_suffix();
    const std::string host_part = suffix.substr(0, suffix.rfind('.') + 1);  // ".tmp.<host>."
    const fs::path dead = fs::path(dir) / ("aaaaaaaaaaaaaaaa" + host_part + std::to_string(child));
    const fs::path alive = fs::path(dir) / ("bbbbbbbbbbbbbbbb" + host_part + std::to_string(getppid()));
    const fs::path other_host =
        fs::path(dir) / ("cccccccccccccccc.tmp.some-other-node." + std::to_string(child));
    for (const fs::path& p : {dead, alive, other_host})
        fs::create_directories(p / "inner");
    EXPECT_EQ(remove_stale_temporaries(dir), 1u);
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_TRUE(fs::exists(alive));
    EXPECT_TRUE(fs::exists(other_host));
}

// A full disk or a failing fsync, rename or folder fsync: an error naming the file, no cache and no
// temporary folder left; and a successful cache survives a crash (everything fsynced before the rename).
TEST(TokenCacheWriter, FaultsLeaveNoCacheAndACommittedOneSurvivesACrash) {
    using Operation = FaultyFileSystem::Operation;
    const std::vector<std::pair<std::string, std::function<void(FaultyFileSystem&)>>> faults = {
        {"No space left on device", [](FaultyFileSystem& f) { f.fill_disk_after(30); }},
        {"No space left on device", [](FaultyFileSystem& f) { f.fill_disk_after(0, "meta.json"); }},
        {"fsync: Input/output error", [](FaultyFileSystem& f) { f.fail(Operation::kSync, "train.tokens"); }},
        {"close: Input/output error", [](FaultyFileSystem& f) { f.fail(Operation::kClose, "meta.json"); }},
        {"fsync of the folder: Input/output error",
         [](FaultyFileSystem& f) { f.fail(Operation::kSyncDir, ".tmp."); }},
        {"cannot rename", [](FaultyFileSystem& f) { f.fail(Operation::kRename, "0123456789abcdef$"); }},
    };
    for (const auto& [expected, inject] : faults) {
        const std::string dir = fresh_dir("faults");
        FaultyFileSystem faulty;
        inject(faulty);
        Result<std::string> path = try_small_cache(dir, "0123456789abcdef", faulty);
        ASSERT_FALSE(path.ok()) << expected;
        EXPECT_NE(path.error().find(dir + "/0123456789abcdef"), std::string::npos) << path.error();
        EXPECT_NE(path.error().find(expected), std::string::npos) << path.error();
        EXPECT_TRUE(fs::is_empty(dir)) << expected;
    }
    const std::string dir = fresh_dir("crash");
    FaultyFileSystem faulty;
    Result<std::string> path = try_small_cache(dir, "0123456789abcdef", faulty);
    ASSERT_TRUE(path.ok()) << path.error();
    EXPECT_TRUE(faulty.unsynced_renames().empty()) << testing::PrintToString(faulty.unsynced_renames());
    faulty.crash();
    EXPECT_TRUE(TokenCache::open(*path).ok());
}

TEST(TokenCacheWriter, SecondCommitOfTheSameKeyKeepsTheFirst) {
    const std::string dir = fresh_dir("race");
    const std::string first = write_small_cache(dir);
    const std::string second = write_small_cache(dir);  // as if another process finished later
    EXPECT_EQ(first, second);
    EXPECT_TRUE(TokenCache::open(first).ok());
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
        ++entries;
    EXPECT_EQ(entries, 1u);
}

}  // namespace
}  // namespace slipway::data
