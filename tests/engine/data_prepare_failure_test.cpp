// Tests of prepare on bad input and failures: each kind of bad line gives FILE:LINE (or is counted with
// skip_bad), a 50 MB line is a document, missing files and an unwritable cache folder are clear errors,
// and a failed or killed prepare leaves no complete-looking cache while the next run succeeds. Also the
// `slipway-engine prepare` command end to end. And the worker pool prepare tokenizes on: a job that throws on
// a worker thread (out of memory) throws from run(), where prepare's caller catches it, instead of aborting.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "data/prepare.h"
#include "data/token_cache.h"
#include "data_test_support.h"
#include "test_paths.h"
#include "util/worker_pool.h"

namespace fs = std::filesystem;

namespace slipway::data {
namespace {

class PrepareFailureTest : public testing::Test {
protected:
    void SetUp() override {
        dir_ = test::fresh_dir(testing::UnitTest::GetInstance()->current_test_info()->name());
        train_ = dir_ + "/train.jsonl";
        good_ = test::to_jsonl(test::make_docs(60, 3));
        test::write_file(train_, good_);
        config_ = test::make_config(dir_, train_);
    }

    // Folders in the cache dir: complete caches and leftovers alike.
    std::vector<std::string> cache_entries() const {
        std::vector<std::string> names;
        std::error_code ec;
        for (fs::directory_iterator it(dir_ + "/cache", ec), end; !ec && it != end; ++it) {
            names.push_back(it->path().filename().string());
        }
        return names;
    }

    std::string dir_, train_, good_;
    RunConfig config_;
};

struct BadLine {
    const char* line;
    const char* reason;
};

const BadLine kBadLines[] = {
    {"this is not json", "invalid JSON"},
    {"[\"an\", \"array\"]", "expected a JSON object, got array"},
    {"{\"body\": \"no text field\"}", "missing field \"text\""},
    {"{\"text\": 42}", "field \"text\" is number, not a string"},
    {"{\"text\": null}", "field \"text\" is null, not a string"},
    {"{\"text\": \"\"}", "field \"text\" is empty"},
    {"{\"text\": \" \\n\\t \"}", "field \"text\" is only whitespace"},
    {"{\"text\": \"bad \xff byte\"}", "invalid UTF-8"},
    {"{\"text\": \"lone \\ud800 surrogate\"}", "invalid JSON"},
    {"{\"text\": \"truncated", "invalid JSON"},
};

TEST_F(PrepareFailureTest, EachBadLineIsAnErrorNamingFileAndLine) {
    for (const BadLine& bad : kBadLines) {
        // Two good lines, a blank line (skipped, but counted in the numbering), then the bad one: line 4.
        std::string text =
            good_.substr(0, good_.find('\n', good_.find('\n') + 1) + 1) + "\n" + bad.line + "\n";
        test::write_file(train_, text + good_);
        Result<PrepareReport> report = prepare_token_cache(config_);
        ASSERT_FALSE(report.ok()) << bad.line;
        EXPECT_EQ(report.error().rfind(train_ + ":4: ", 0), 0u) << report.error();
        EXPECT_NE(report.error().find(bad.reason), std::string::npos) << report.error();
        EXPECT_LT(report.error().size(), 400u) << "messages stay short";
        EXPECT_TRUE(cache_entries().empty()) << "no cache and no temporary folder left";
    }
}

TEST_F(PrepareFailureTest, OverlongLineIsAnError) {
    test::write_file(train_, good_ + "{\"text\": \"" + std::string(3000, 'x') + "\"}\n");
    PrepareOptions options;
    options.max_line_bytes = 2000;  // the good lines are shorter
    Result<PrepareReport> report = prepare_token_cache(config_, options);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.error().find(train_ + ":61: line is 3012 bytes, over the limit of 2000"),
              std::string::npos)
        << report.error();
}

TEST_F(PrepareFailureTest, SkipBadCountsAndReportsEveryKind) {
    std::string text;
    for (const BadLine& bad : kBadLines)
        text += std::string(bad.line) + "\n";
    test::write_file(train_, text + good_);
    PrepareOptions options;
    options.skip_bad = true;
    Result<PrepareReport> report = prepare_token_cache(config_, options);
    ASSERT_TRUE(report.ok()) << report.error();
    const size_t bad_count = sizeof(kBadLines) / sizeof(kBadLines[0]);
    EXPECT_EQ(report->meta.bad_lines_skipped, bad_count);
    EXPECT_EQ(report->meta.documents_read, 60u);
    ASSERT_EQ(report->skipped.size(), bad_count);
    EXPECT_EQ(report->skipped[2].rfind(train_ + ":3: missing field", 0), 0u) << report->skipped[2];
    Result<TokenCache> cache = TokenCache::open(report->cache_path);
    ASSERT_TRUE(cache.ok());
    EXPECT_EQ(cache->meta().bad_lines_skipped, bad_count);
}

TEST_F(PrepareFailureTest, FiftyMegabyteLineIsOneDocument) {
    std::string huge = "{\"text\": \"";
    const std::string sentence = "the computer says no, кот сидел на ковре. ";
    while (huge.size() < (size_t{50} << 20))
        huge += sentence;
    huge += "\"}\n";
    test::write_file(train_, good_ + huge + good_);
    config_.data.split = "document";
    config_.data.block_size = 1024;
    config_.data.validation_split_percentage = 0;
    Result<PrepareReport> report = prepare_token_cache(config_);
    ASSERT_TRUE(report.ok()) << report.error();
    EXPECT_EQ(report->meta.documents_read, 121u);
    EXPECT_GT(report->meta.train.tokens, 1000000u);  // ~50 MB of words: millions of tokens
}

TEST_F(PrepareFailureTest, MissingFilesAreNamed) {
    config_.data.train_file = dir_ + "/nope.jsonl";
    Result<PrepareReport> report = prepare_token_cache(config_);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.error().find(dir_ + "/nope.jsonl: train file not found"), std::string::npos)
        << report.error();
    config_ = test::make_config(dir_, train_);
    config_.tokenizer.path = dir_ + "/missing-tokenizer.json";
    report = prepare_token_cache(config_);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.error().find("missing-tokenizer.json: tokenizer file not found"), std::string::npos);
    config_ = test::make_config(dir_, train_);
    config_.tokenizer.path = "";  // <model.path>/tokenizer.json, and there is no model folder
    report = prepare_token_cache(config_);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.error().find(dir_ + "/model/tokenizer.json"), std::string::npos) << report.error();
}

TEST_F(PrepareFailureTest, UnwritableCacheFolderIsAnError) {
    test::write_file(dir_ + "/a-file", "not a folder");
    config_.data.cache_dir = dir_ + "/a-file/cache";
    Result<PrepareReport> report = prepare_token_cache(config_);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.error().find(dir_ + "/a-file/cache: cannot create the cache folder"), std::string::npos)
        << report.error();
    if (geteuid() != 0) {  // root writes anywhere: the permission case needs an ordinary user
        fs::create_directories(dir_ + "/locked");
        fs::permissions(dir_ + "/locked", fs::perms::owner_read | fs::perms::owner_exec);
        config_.data.cache_dir = dir_ + "/locked";
        report = prepare_token_cache(config_);
        fs::permissions(dir_ + "/locked", fs::perms::owner_all);
        ASSERT_FALSE(report.ok());
        EXPECT_NE(report.error().find("cannot create folder"), std::string::npos) << report.error();
    }
}

TEST_F(PrepareFailureTest, InjectedFailureLeavesNothingAndTheNextRunSucceeds) {
    PrepareOptions options;
    options.batch_documents = 10;
    options.after_batch = [](uint64_t batch) {
        return batch == 3 ? Status::Error("injected: disk full") : Status::Ok();
    };
    Result<PrepareReport> report = prepare_token_cache(config_, options);
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.error(), "injected: disk full");
    EXPECT_TRUE(cache_entries().empty());
    report = prepare_token_cache(config_);
    ASSERT_TRUE(report.ok()) << report.error();
    EXPECT_FALSE(report->cache_hit);
    EXPECT_TRUE(TokenCache::open(report->cache_path).ok());
}

TEST_F(PrepareFailureTest, KilledPrepareLeavesNoCompleteCacheAndTheNextRunSucceeds) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // killed for real in the middle of writing: no destructor, no cleanup
        PrepareOptions options;
        options.batch_documents = 10;
        options.after_batch = [](uint64_t batch) {
            if (batch == 3) raise(SIGKILL);
            return Status::Ok();
        };
        (void)prepare_token_cache(config_, options);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    const std::vector<std::string> left = cache_entries();
    ASSERT_EQ(left.size(), 1u);
    EXPECT_NE(left[0].find(".tmp."), std::string::npos) << left[0];
    EXPECT_NE(left[0].find("." + std::to_string(child)), std::string::npos) << left[0];
    EXPECT_FALSE(TokenCache::open(dir_ + "/cache/" + left[0]).ok());

    Result<PrepareReport> report = prepare_token_cache(config_);
    ASSERT_TRUE(report.ok()) << report.error();
    EXPECT_EQ(report->stale_temporaries_removed, 1u);
    EXPECT_EQ(cache_entries(), std::vector<std::string>({fs::path(report->cache_path).filename().string()}));
}

// The command line: run from the data folder with relative paths in the run config.
std::string run_engine(const std::string& dir, const std::string& args, int* exit_code) {
    const std::string command =
        "cd '" + dir + "' && " + test_paths::engine_bin() + " " + args + " 2>stderr.txt";
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    char buffer[4096];
    while (pipe && std::fgets(buffer, sizeof(buffer), pipe))
        out += buffer;
    const int status = pipe ? pclose(pipe) : -1;
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

TEST_F(PrepareFailureTest, CommandPreparesThenHitsTheCache) {
    config_.tokenizer.path = test::demo_tokenizer();
    config_.model.path = "model";
    config_.data.train_file = "train.jsonl";
    config_.data.cache_dir = "cache";
    ASSERT_TRUE(save_run_config(config_, dir_ + "/run.json").ok());
    int code = -1;
    const std::string first = run_engine(dir_, "prepare run.json --threads 2", &code);
    EXPECT_EQ(code, 0) << test::read_file(dir_ + "/stderr.txt");
    EXPECT_EQ(first.rfind("prepared " + dir_ + "/cache/", 0), 0u) << first;
    EXPECT_NE(first.find("60 documents"), std::string::npos) << first;
    EXPECT_NE(first.find("2 threads"), std::string::npos) << first;
    const std::string second = run_engine(dir_, "prepare run.json", &code);
    EXPECT_EQ(code, 0);
    EXPECT_EQ(second.rfind("cache hit: " + dir_ + "/cache/", 0), 0u) << second;
}

TEST_F(PrepareFailureTest, CommandFailsOnABadLineWithFileAndLine) {
    test::write_file(train_, good_ + "{\"text\": 1}\n");
    ASSERT_TRUE(save_run_config(config_, dir_ + "/run.json").ok());
    int code = -1;
    const std::string out = run_engine(dir_, "prepare run.json", &code);
    EXPECT_EQ(code, 1);
    EXPECT_TRUE(out.empty()) << out;
    const std::string err = test::read_file(dir_ + "/stderr.txt");
    EXPECT_NE(err.find(train_ + ":61: field \"text\" is number"), std::string::npos) << err;
    const std::string skipped = run_engine(dir_, "prepare run.json --skip-bad", &code);
    EXPECT_EQ(code, 0);
    EXPECT_NE(skipped.find("1 bad lines skipped"), std::string::npos) << skipped;
}

TEST(WorkerPoolFailure, AJobThatThrowsOnAWorkerThrowsFromRunAfterEveryWorkerIsDone) {
    WorkerPool pool(3);
    std::atomic<int> finished{0};
    EXPECT_THROW(pool.run([&](unsigned worker) {
        if (worker == 2) throw std::bad_alloc();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ++finished;
    }),
                 std::bad_alloc);
    EXPECT_EQ(finished.load(), 2) << "run() returned before the other workers were done";
    // The pool still works after a failed job.
    finished = 0;
    pool.run([&](unsigned) { ++finished; });
    EXPECT_EQ(finished.load(), 3);
}

}  // namespace
}  // namespace slipway::data
