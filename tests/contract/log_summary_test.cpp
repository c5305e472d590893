// Tests of LogSummary: the three real MLPerf logs field by field (values checked by hand with grep), the
// summary rules on small synthetic logs, file errors and the JSON layout.
#include "contract/log_summary.h"
#include "test_paths.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace slipway {
namespace {

std::string data_path(const std::string& name) {
    return std::string(test_paths::test_data_dir("/mlperf-logs/")) + name;
}

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.is_open()) << path;
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A file under the temp dir that is removed when the test ends.
class TempFile {
public:
    TempFile(const std::string& name, const std::string& bytes)
        : path_(std::filesystem::temp_directory_path() /
                ("slipway_" + std::to_string(::getpid()) + "_" + name)) {
        std::ofstream out(path_, std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    ~TempFile() { std::filesystem::remove(path_); }
    std::string path() const { return path_.string(); }

private:
    std::filesystem::path path_;
};

struct Point {
    double samples;
    double value;
};

void expect_point(const MetricPoint& p, Point expected) {
    ASSERT_TRUE(p.samples_count.has_value());
    EXPECT_EQ(*p.samples_count, expected.samples);
    ASSERT_TRUE(p.value.is_number());
    EXPECT_EQ(p.value.get<double>(),
              expected.value);  // exact: the same decimal text parses to the same double
}

// Expected numbers below come from the files themselves:
//   grep -c '' FILE; grep -c ':::MLLOG ' FILE; grep -E '"key":
//   "(run_start|run_stop|eval_accuracy|train_loss)"'
TEST(LogSummaryRealLogs, Dell) {
    const Result<LogSummary> r = summarize_log_file(data_path("dell-xe9680-result_0.txt"));
    ASSERT_TRUE(r.ok()) << r.error();
    const LogSummary& s = *r;
    EXPECT_EQ(s.file, data_path("dell-xe9680-result_0.txt"));
    EXPECT_EQ(s.lines, 699);  // CRLF line ends
    EXPECT_EQ(s.mllog_lines, 52);
    EXPECT_EQ(s.bad_lines, 0);
    EXPECT_EQ(s.status, "success");
    EXPECT_EQ(s.run_start_ms, 1713994395504);
    EXPECT_EQ(s.run_stop_ms, 1713996161336);
    EXPECT_EQ(s.time_to_train_ms, 1765832);
    ASSERT_EQ(s.eval_accuracy.size(), 5u);
    expect_point(s.eval_accuracy.front(), {1536, 0.937900960445404});
    expect_point(s.eval_accuracy[2], {2304, 0.930975079536438});
    expect_point(s.eval_accuracy.back(), {3072, 0.9239340424537659});
    EXPECT_TRUE(s.train_loss.empty());
}

TEST(LogSummaryRealLogs, Fujitsu) {
    const Result<LogSummary> r = summarize_log_file(data_path("fujitsu-gx2560m7-result_0.txt"));
    ASSERT_TRUE(r.ok()) << r.error();
    const LogSummary& s = *r;
    EXPECT_EQ(s.lines, 757);
    EXPECT_EQ(s.mllog_lines, 52);  // all behind srun's "0: "
    EXPECT_EQ(s.bad_lines, 0);
    EXPECT_EQ(s.status, "success");
    EXPECT_EQ(s.run_start_ms, 1715065028111);
    EXPECT_EQ(s.run_stop_ms, 1715068585688);
    EXPECT_EQ(s.time_to_train_ms, 3557577);
    ASSERT_EQ(s.eval_accuracy.size(), 5u);
    expect_point(s.eval_accuracy.front(), {1536, 0.9392887949943542});
    expect_point(s.eval_accuracy[3], {2688, 0.9382851719856262});
    expect_point(s.eval_accuracy.back(), {3072, 0.9238672852516174});
    EXPECT_TRUE(s.train_loss.empty());
}

TEST(LogSummaryRealLogs, Juniper) {
    const Result<LogSummary> r = summarize_log_file(data_path("juniper-h100n1-result_0.txt"));
    ASSERT_TRUE(r.ok()) << r.error();
    const LogSummary& s = *r;
    EXPECT_EQ(s.lines, 89);
    EXPECT_EQ(s.mllog_lines, 89);
    EXPECT_EQ(s.bad_lines, 0);
    EXPECT_EQ(s.status, "success");
    EXPECT_EQ(s.run_start_ms, 1715151009823);
    EXPECT_EQ(s.run_stop_ms, 1715157926587);
    EXPECT_EQ(s.time_to_train_ms, 6916764);
    ASSERT_EQ(s.eval_accuracy.size(), 7u);
    expect_point(s.eval_accuracy.front(), {1536, 0.9428010582923889});
    expect_point(s.eval_accuracy.back(), {3840, 0.9246053695678711});
    ASSERT_EQ(s.train_loss.size(), 46u);
    expect_point(s.train_loss.front(), {80, 3.7142});
    expect_point(s.train_loss[1], {160, 2.3768});
    expect_point(s.train_loss.back(), {3760, 1.2826});
}

TEST(LogSummaryRealLogs, FileAndInMemorySummariesAgree) {
    for (const char* name :
         {"dell-xe9680-result_0.txt", "fujitsu-gx2560m7-result_0.txt", "juniper-h100n1-result_0.txt"}) {
        const Result<LogSummary> from_file = summarize_log_file(data_path(name));
        ASSERT_TRUE(from_file.ok());
        EXPECT_EQ(to_json(*from_file),
                  to_json(summarize_log_text(read_bytes(data_path(name)), data_path(name))));
    }
}

TEST(LogSummaryJson, RealLogInTheDocumentedLayout) {
    const Result<LogSummary> r = summarize_log_file(data_path("juniper-h100n1-result_0.txt"));
    ASSERT_TRUE(r.ok());
    const nlohmann::ordered_json j = to_json(*r);
    std::vector<std::string> keys;
    for (const auto& item : j.items())
        keys.push_back(item.key());
    EXPECT_EQ(keys,
              (std::vector<std::string>{"file", "lines", "mllog_lines", "bad_lines", "status", "run_start_ms",
                                        "run_stop_ms", "time_to_train_ms", "eval_accuracy", "train_loss"}));
    const std::string text = j.dump();
    const std::string head = "{\"file\":" + nlohmann::json(data_path("juniper-h100n1-result_0.txt")).dump() +
                             ",\"lines\":89,\"mllog_lines\":89,\"bad_lines\":0,\"status\":\"success\","
                             "\"run_start_ms\":1715151009823,\"run_stop_ms\":1715157926587,"
                             "\"time_to_train_ms\":6916764,\"eval_accuracy\":[[1536,0.9428010582923889],";
    EXPECT_EQ(text.substr(0, head.size()), head);
    EXPECT_NE(text.find(",[3840,0.9246053695678711]],\"train_loss\":[[80,3.7142],[160,2.3768],"),
              std::string::npos);
    EXPECT_EQ(text.substr(text.size() - 15), "[3760,1.2826]]}");
}

TEST(LogSummaryJson, UnknownFieldsAreNull) {
    EXPECT_EQ(to_json(summarize_log_text("", "empty.log")).dump(),
              "{\"file\":\"empty.log\",\"lines\":0,\"mllog_lines\":0,\"bad_lines\":0,\"status\":null,"
              "\"run_start_ms\":null,\"run_stop_ms\":null,\"time_to_train_ms\":null,\"eval_accuracy\":[],"
              "\"train_loss\":[]}");
}

TEST(LogSummaryJson, SamplesCountIsAnIntegerWhenIntegral) {
    const LogSummary s = summarize_log_text(
        ":::MLLOG {\"key\": \"eval_accuracy\", \"value\": 0.95, \"metadata\": {\"samples_count\": 1536.0}}\n"
        ":::MLLOG {\"key\": \"eval_accuracy\", \"value\": 0.94, \"metadata\": {\"samples_count\": 1536.5}}\n"
        ":::MLLOG {\"key\": \"eval_accuracy\", \"value\": 1, \"metadata\": {}}\n"
        ":::MLLOG {\"key\": \"train_loss\", \"value\": \"2.5\", \"metadata\": {\"samples_count\": \"8\"}}\n",
        "x");
    EXPECT_EQ(to_json(s)["eval_accuracy"].dump(), "[[1536,0.95],[1536.5,0.94],[null,1]]");
    EXPECT_EQ(to_json(s)["train_loss"].dump(), "[[null,\"2.5\"]]");  // value as given, even a string
}

TEST(LogSummaryJson, EvalTaskLinesAreOneSeriesPerTaskAndMetric) {
    const LogSummary s = summarize_log_text(
        ":::MLLOG {\"key\": \"eval_task\", \"value\": 0.5, \"metadata\": {\"samples_count\": 24, "
        "\"task\": \"mc\", \"metric\": \"acc\"}}\n"
        ":::MLLOG {\"key\": \"eval_task\", \"value\": 812.5, \"metadata\": {\"samples_count\": 24, "
        "\"task\": \"ppl\", \"metric\": \"perplexity\"}}\n"
        ":::MLLOG {\"key\": \"eval_task\", \"value\": 0.75, \"metadata\": {\"samples_count\": 48, "
        "\"task\": \"mc\", \"metric\": \"acc\"}}\n"
        ":::MLLOG {\"key\": \"eval_task\", \"value\": 1, \"metadata\": {\"task\": \"mc\"}}\n",  // no metric
        "x");
    EXPECT_EQ(to_json(s)["eval_task"].dump(),
              "{\"mc/acc\":[[24,0.5],[48,0.75]],\"ppl/perplexity\":[[24,812.5]]}");
}

TEST(LogSummaryRules, FirstRunStartLastRunStop) {
    const LogSummary s = summarize_log_text(
        ":::MLLOG {\"time_ms\": 100, \"key\": \"run_start\"}\n"
        ":::MLLOG {\"time_ms\": 200, \"key\": \"run_stop\", \"metadata\": {\"status\": \"aborted\"}}\n"
        ":::MLLOG {\"time_ms\": 300, \"key\": \"run_start\"}\n"
        ":::MLLOG {\"time_ms\": 900, \"key\": \"run_stop\", \"metadata\": {\"status\": \"success\"}}\n",
        "x");
    EXPECT_EQ(s.run_start_ms, 100);
    EXPECT_EQ(s.run_stop_ms, 900);
    EXPECT_EQ(s.time_to_train_ms, 800);
    EXPECT_EQ(s.status, "success");
}

TEST(LogSummaryRules, StatusComesFromTheLastRunStopEvenWhenItHasNone) {
    const LogSummary s = summarize_log_text(
        ":::MLLOG {\"time_ms\": 200, \"key\": \"run_stop\", \"metadata\": {\"status\": \"fail\"}}\n"
        ":::MLLOG {\"time_ms\": 250, \"key\": \"run_stop\", \"metadata\": {\"samples_count\": 8}}",
        "x");
    EXPECT_EQ(s.run_stop_ms, 250);
    EXPECT_FALSE(s.status.has_value());
    EXPECT_FALSE(s.run_start_ms.has_value());
    EXPECT_FALSE(s.time_to_train_ms.has_value());  // no run_start
    EXPECT_EQ(s.lines, 2);                         // the final unterminated line counts
}

TEST(LogSummaryRules, RunStartWithoutStopHasNoTimeToTrain) {
    const LogSummary s = summarize_log_text(":::MLLOG {\"time_ms\": 100, \"key\": \"run_start\"}\n", "x");
    EXPECT_EQ(s.run_start_ms, 100);
    EXPECT_FALSE(s.run_stop_ms.has_value());
    EXPECT_FALSE(s.time_to_train_ms.has_value());
    EXPECT_FALSE(s.status.has_value());
}

TEST(LogSummaryRules, BadLinesAndPrefixesAndLineEnds) {
    const std::string bytes =
        "text\r\n"
        "0: :::MLLOG {\"key\": \"eval_accuracy\", \"value\": 0.9, \"metadata\": {\"samples_count\": 64}}\r\n"
        "1: :::MLLOG {not json}\n"
        ":::MLLOG [\"an\", \"array\"]\n"
        ":::MLLOG \"a string\"\n"
        ":::MLLOG {\"key\": \"bad \xff utf8\"}\n"
        "::MLLOG {\"key\": \"eval_accuracy\"}\n"  // not the marker: text
        "\n"
        ":::MLLOG {\"key\": \"train_loss\", \"value\": 2.0, \"metadata\": {\"samples_count\": 8}}";
    const LogSummary s = summarize_log_text(bytes, "x");
    EXPECT_EQ(s.lines, 9);
    EXPECT_EQ(s.mllog_lines, 6);
    EXPECT_EQ(s.bad_lines, 4);
    ASSERT_EQ(s.eval_accuracy.size(), 1u);
    expect_point(s.eval_accuracy[0], {64, 0.9});
    ASSERT_EQ(s.train_loss.size(), 1u);
    expect_point(s.train_loss[0], {8, 2.0});
}

TEST(LogSummaryRules, EmptyAndBlankLogs) {
    const LogSummary empty = summarize_log_text("", "x");
    EXPECT_EQ(empty.lines, 0);
    EXPECT_EQ(empty.mllog_lines, 0);
    const LogSummary blank = summarize_log_text("\n", "x");
    EXPECT_EQ(blank.lines, 1);
    const LogSummary cr = summarize_log_text("\r", "x");
    EXPECT_EQ(cr.lines, 1);
}

TEST(LogSummaryFile, EmptyFile) {
    const TempFile file("empty.log", "");
    const Result<LogSummary> r = summarize_log_file(file.path());
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->lines, 0);
    EXPECT_EQ(r->file, file.path());
}

TEST(LogSummaryFile, LargeFileAcrossReadChunks) {
    std::string bytes;
    const int n = 60000;  // ~5 MB: many read chunks, lines cut at chunk edges
    for (int i = 0; i < n; ++i) {
        bytes +=
            "0: :::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(1000 + i) +
            ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"train_loss\", \"value\": 1.5, \"metadata\": "
            "{\"samples_count\": " +
            std::to_string(8 * (i + 1)) + "}}\r\n";
    }
    const TempFile file("large.log", bytes);
    const Result<LogSummary> r = summarize_log_file(file.path());
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->lines, n);
    EXPECT_EQ(r->mllog_lines, n);
    EXPECT_EQ(r->bad_lines, 0);
    ASSERT_EQ(r->train_loss.size(), static_cast<size_t>(n));
    EXPECT_EQ(r->train_loss.back().samples_count, 8.0 * n);
}

TEST(LogSummaryFile, MissingFileErrorNamesIt) {
    const std::string path = "/nonexistent/slipway/run.log";
    const Result<LogSummary> r = summarize_log_file(path);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find(path), std::string::npos) << r.error();
}

TEST(LogSummaryFile, DirectoryErrorNamesIt) {
    const std::string path = std::filesystem::temp_directory_path().string();
    const Result<LogSummary> r = summarize_log_file(path);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find(path), std::string::npos) << r.error();
}

TEST(LogSummaryFile, TruncatedRealLogsNeverCrash) {
    const std::string bytes = read_bytes(data_path("fujitsu-gx2560m7-result_0.txt"));
    for (size_t cut = 0; cut <= bytes.size(); cut += 101) {
        const LogSummary s = summarize_log_text(std::string_view(bytes).substr(0, cut), "x");
        EXPECT_LE(s.bad_lines, 1);
        EXPECT_LE(s.mllog_lines, 52);
        EXPECT_LE(s.eval_accuracy.size(), 5u);
        // run_stop is on the last MLLOG line; before it, no status and no time to train.
        EXPECT_EQ(s.status.has_value(), s.run_stop_ms.has_value());
    }
}

}  // namespace
}  // namespace slipway
