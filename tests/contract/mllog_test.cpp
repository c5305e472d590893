// Tests of the MLLOG line writer (byte-exact against Python's json.dumps and real logs) and parser.
#include "contract/mllog.h"
#include "test_paths.h"

#include "contract/faulty_file_system.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace slipway {
namespace {

const char* const kRealLogs[] = {"dell-xe9680-result_0.txt", "fujitsu-gx2560m7-result_0.txt",
                                 "juniper-h100n1-result_0.txt"};

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.is_open()) << path;
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string data_path(const std::string& name) {
    return std::string(test_paths::test_data_dir("/mlperf-logs/")) + name;
}

// Independent of MllogStream on purpose: split on '\n', drop one trailing '\r'.
std::vector<std::string> split_lines(const std::string& bytes) {
    std::vector<std::string> lines;
    std::string line;
    std::istringstream in(bytes);
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(line);
    }
    return lines;
}

std::string py(const MllogJson& j) {
    return format_python_json(j);
}

TEST(MllogFormat, EveryRealMllogLineReformatsByteIdentical) {
    const size_t expected_counts[] = {52, 52, 89};
    for (size_t i = 0; i < std::size(kRealLogs); ++i) {
        size_t checked = 0;
        for (const std::string& line : split_lines(read_bytes(data_path(kRealLogs[i])))) {
            const size_t pos = line.find(":::MLLOG ");
            if (pos == std::string::npos) continue;
            const MllogParseResult parsed = parse_mllog_line(line);
            ASSERT_EQ(parsed.kind, MllogLineKind::kEvent) << kRealLogs[i] << ": " << line;
            EXPECT_EQ(format_mllog_line(parsed.event), line.substr(pos)) << kRealLogs[i];
            ++checked;
        }
        EXPECT_EQ(checked, expected_counts[i]) << kRealLogs[i];
    }
}

TEST(MllogFormat, FloatsAsPythonRepr) {
    // Expected strings are Python 3's repr() of the same doubles.
    EXPECT_EQ(py(0.0004), "0.0004");
    EXPECT_EQ(py(1e-4), "0.0001");
    EXPECT_EQ(py(1e-5), "1e-05");
    EXPECT_EQ(py(2.5e-7), "2.5e-07");
    EXPECT_EQ(py(1e15), "1000000000000000.0");
    EXPECT_EQ(py(1e16), "1e+16");
    EXPECT_EQ(py(1.5e16), "1.5e+16");
    EXPECT_EQ(py(1e22), "1e+22");
    EXPECT_EQ(py(123456789012345.6), "123456789012345.6");
    EXPECT_EQ(py(1234567890123456.7), "1234567890123456.8");
    EXPECT_EQ(py(0.1), "0.1");
    EXPECT_EQ(py(1.0), "1.0");
    EXPECT_EQ(py(100.0), "100.0");
    EXPECT_EQ(py(0.0), "0.0");
    EXPECT_EQ(py(-0.0), "-0.0");
    EXPECT_EQ(py(-3.7142), "-3.7142");
    EXPECT_EQ(py(0.937900960445404), "0.937900960445404");
    EXPECT_EQ(py(5e-324), "5e-324");
    EXPECT_EQ(py(1.7976931348623157e308), "1.7976931348623157e+308");
    // Python would write NaN/Infinity, which is not JSON; we write null so our own reader accepts the line.
    EXPECT_EQ(py(std::numeric_limits<double>::quiet_NaN()), "null");
    EXPECT_EQ(py(-std::numeric_limits<double>::infinity()), "null");
}

TEST(MllogFormat, ContainersAndStringsAsPythonJsonDumps) {
    MllogJson j = MllogJson::object();
    j["s"] = "\u00e9\u2603\U0001F600\x7f\x01\n\t\"\\/";
    j["l"] = MllogJson::array({1, 2.5, nullptr, true, false, MllogJson::object(), MllogJson::array()});
    j["e"] = MllogJson::object();
    j["n"] = -3;
    j["big"] = std::numeric_limits<uint64_t>::max();
    // python3 -c 'import json; print(json.dumps({"s": "\u00e9\u2603\U0001F600\x7f\x01\n\t\"\\/", ...}))'
    EXPECT_EQ(
        py(j),
        R"({"s": "\u00e9\u2603\ud83d\ude00\u007f\u0001\n\t\"\\/", "l": [1, 2.5, null, true, false, {}, []], )"
        R"("e": {}, "n": -3, "big": 18446744073709551615})");
}

TEST(MllogFormat, InvalidUtf8InAStringIsReplacedNotThrown) {
    EXPECT_EQ(py(MllogJson(std::string("a\xff"
                                       "b"))),
              R"("a\ufffdb")");
}

TEST(MllogFormat, LineMatchesTheMlcommonsLayout) {
    MllogEvent e;
    e.time_ms = 1713994395504;
    e.event_type = "POINT_IN_TIME";
    e.key = "eval_accuracy";
    e.value = 0.93;
    e.metadata = MllogJson::object();
    e.metadata["file"] = "/workspace/callbacks.py";
    e.metadata["lineno"] = 169;
    e.metadata["samples_count"] = 1536;
    EXPECT_EQ(format_mllog_line(e),
              R"(:::MLLOG {"namespace": "", "time_ms": 1713994395504, "event_type": "POINT_IN_TIME", )"
              R"("key": "eval_accuracy", "value": 0.93, "metadata": {"file": "/workspace/callbacks.py", )"
              R"("lineno": 169, "samples_count": 1536}})");
}

class FakeClock {
public:
    int64_t operator()() { return next_++; }

private:
    int64_t next_ = 1700000000000;
};

TEST(MllogWriter, WritesLinesThatParseBack) {
    std::ostringstream out;
    MllogWriter writer(out, FakeClock());
    const int line1 = __LINE__ + 1;
    writer.interval_start("run_start");
    const int line2 = __LINE__ + 1;
    writer.point_in_time("eval_accuracy", 0.9379, {{"samples_count", 1536}, {"step_num", 12}});
    const int line3 = __LINE__ + 1;
    writer.interval_end("run_stop", nullptr, {{"status", "success"}});

    const std::string file = MllogJson(__FILE__).dump();
    const std::string expected =
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1700000000000, \"event_type\": \"INTERVAL_START\", "
        "\"key\": "
        "\"run_start\", \"value\": null, \"metadata\": {\"file\": " +
        file + ", \"lineno\": " + std::to_string(line1) +
        "}}\n"
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1700000000001, \"event_type\": \"POINT_IN_TIME\", "
        "\"key\": "
        "\"eval_accuracy\", \"value\": 0.9379, \"metadata\": {\"file\": " +
        file + ", \"lineno\": " + std::to_string(line2) +
        ", \"samples_count\": 1536, \"step_num\": 12}}\n"
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1700000000002, \"event_type\": \"INTERVAL_END\", "
        "\"key\": "
        "\"run_stop\", \"value\": null, \"metadata\": {\"file\": " +
        file + ", \"lineno\": " + std::to_string(line3) + ", \"status\": \"success\"}}\n";
    EXPECT_EQ(out.str(), expected);

    const std::vector<std::string> lines = split_lines(out.str());
    ASSERT_EQ(lines.size(), 3u);
    const MllogParseResult eval = parse_mllog_line(lines[1]);
    ASSERT_EQ(eval.kind, MllogLineKind::kEvent);
    EXPECT_EQ(eval.event.ns, "");
    EXPECT_EQ(eval.event.time_ms, 1700000000001);
    EXPECT_EQ(eval.event.event_type, "POINT_IN_TIME");
    EXPECT_EQ(eval.event.key, "eval_accuracy");
    EXPECT_EQ(eval.event.value, MllogJson(0.9379));
    EXPECT_EQ(eval.event.samples_count(), 1536.0);
    EXPECT_EQ(eval.event.step_num(), 12.0);
    EXPECT_EQ(eval.event.metadata["file"], __FILE__);
    EXPECT_EQ(eval.event.metadata["lineno"], line2);
    const MllogParseResult stop = parse_mllog_line(lines[2]);
    ASSERT_EQ(stop.kind, MllogLineKind::kEvent);
    EXPECT_EQ(stop.event.event_type, "INTERVAL_END");
    EXPECT_EQ(stop.event.metadata_string("status"), "success");
    EXPECT_TRUE(stop.event.value.is_null());
    EXPECT_EQ(format_mllog_line(stop.event) + "\n", lines[2] + "\n");
}

TEST(MllogWriter, CallerMetadataOverridesCallSiteInPlaceAndNonObjectsAreIgnored) {
    std::ostringstream out;
    MllogWriter writer(out, [] { return int64_t{5}; });
    writer.set_namespace("GPU0");
    writer.point_in_time("k", "v", {{"lineno", 7}, {"file", "x.py"}, {"epoch_num", 2}});
    writer.point_in_time("k", 1, "not an object");
    const std::vector<std::string> lines = split_lines(out.str());
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0],
              R"(:::MLLOG {"namespace": "GPU0", "time_ms": 5, "event_type": "POINT_IN_TIME", "key": "k", )"
              R"("value": "v", "metadata": {"file": "x.py", "lineno": 7, "epoch_num": 2}})");
    const MllogParseResult second = parse_mllog_line(lines[1]);
    ASSERT_EQ(second.kind, MllogLineKind::kEvent);
    EXPECT_EQ(second.event.metadata.size(), 2u);  // file, lineno only
    EXPECT_TRUE(second.event.metadata.contains("file"));
}

TEST(MllogWriter, NonFiniteValuesAreWrittenAsNullSoTheLineStaysReadable) {
    std::ostringstream out;
    MllogWriter writer(out, [] { return int64_t{1}; });
    writer.point_in_time("train_loss", std::numeric_limits<double>::quiet_NaN(), {{"samples_count", 8}});
    const MllogParseResult parsed = parse_mllog_line(out.str());
    ASSERT_EQ(parsed.kind, MllogLineKind::kEvent) << parsed.error;
    EXPECT_TRUE(parsed.event.value.is_null());
}

TEST(MllogWriter, WritesTheSameLinesToEveryStreamAndFile) {
    const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                       ("slipway_mllog_writer_" + std::to_string(::getpid()) + ".log");
    std::filesystem::remove(path);
    std::ostringstream first;
    std::ostringstream second;
    {
        MllogWriter writer(first, FakeClock());
        writer.add_stream(second);
        ASSERT_TRUE(writer.tee_to_file(path.string()).ok());
        writer.interval_start("init_start");
        writer.point_in_time("global_batch_size", 8);
        writer.interval_end("init_stop");
    }
    EXPECT_EQ(split_lines(first.str()).size(), 3u);
    EXPECT_EQ(first.str(), second.str());
    EXPECT_EQ(first.str(), read_bytes(path.string()));
    std::filesystem::remove(path);
}

TEST(MllogWriter, TeeToAnUnwritablePathNamesIt) {
    std::ostringstream out;
    MllogWriter writer(out);
    const Status status = writer.tee_to_file("/nonexistent-dir/run.log");
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("/nonexistent-dir/run.log"), std::string::npos) << status.message();
}

TEST(MllogWriter, TeeOnAFullDiskStopsTheCopyAndNamesTheFirstMissingLine) {
    const auto path = std::filesystem::temp_directory_path() / ("mllog_full_" + std::to_string(getpid()));
    std::filesystem::remove(path);
    FaultyFileSystem disk;
    std::ostringstream out;
    MllogWriter writer(out, FakeClock());
    ASSERT_TRUE(writer.tee_to_file(path.string(), disk).ok());
    writer.interval_start("init_start");
    const size_t first_line = out.str().size();
    disk.fill_disk_after(10);  // room for a part of the second line
    writer.point_in_time("global_batch_size", 8);
    writer.interval_end("init_stop");
    const Status status = writer.file_status();
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find(path.string() + ": write: No space left on device; the MLLOG copy stops "
                                                    "before the 'global_batch_size' line"),
              std::string::npos)
        << status.message();
    EXPECT_EQ(split_lines(out.str()).size(), 3u) << "the other streams keep every line";
    EXPECT_FALSE(writer.close_files().ok());
    const std::string copy = read_bytes(path.string());
    EXPECT_GE(copy.size(), first_line);
    EXPECT_LE(copy.size(), first_line + 10);
    EXPECT_EQ(out.str().substr(0, copy.size()), copy);
    std::filesystem::remove(path);
}

// A copy cut mid-line (a full disk, a crash) gets a newline before a resumed run's first line, so that
// line is not glued onto the torn one.
TEST(MllogWriter, TeeAfterATornLineStartsOnANewLine) {
    const auto path = std::filesystem::temp_directory_path() / ("mllog_torn_" + std::to_string(getpid()));
    std::ofstream(path) << ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_ty";
    {
        std::ostringstream out;
        MllogWriter writer(out, FakeClock());
        ASSERT_TRUE(writer.tee_to_file(path.string()).ok());
        writer.interval_start("init_start");
        const std::string copy = read_bytes(path.string());
        EXPECT_EQ(copy.substr(copy.find('\n') + 1), out.str());
    }
    std::filesystem::remove(path);
}

TEST(MllogWriter, SystemClockIsMillisecondsSinceEpoch) {
    const int64_t now = MllogWriter::system_clock_ms();
    EXPECT_GT(now, int64_t{1700000000000});  // after Nov 2023
    EXPECT_LT(now, int64_t{4102444800000});  // before 2100
}

TEST(MllogParse, TextLinesAreNotMllog) {
    for (const char* line : {"", "plain text", "::MLLOG {}", ":::MLLOG{}", ":::mllog {}", ":::DLPAL x"}) {
        const MllogParseResult r = parse_mllog_line(line);
        EXPECT_EQ(r.kind, MllogLineKind::kText) << line;
        EXPECT_TRUE(r.error.empty());
    }
}

TEST(MllogParse, DropsWhatPrecedesTheMarker) {
    const MllogParseResult r = parse_mllog_line(
        R"(0: :::MLLOG {"namespace": "", "time_ms": 1715065028111, "event_type": "INTERVAL_START", )"
        R"("key": "run_start", "value": null, "metadata": {"file": "a.py", "lineno": 145}})");
    ASSERT_EQ(r.kind, MllogLineKind::kEvent) << r.error;
    EXPECT_EQ(r.event.key, "run_start");
    EXPECT_EQ(r.event.time_ms, 1715065028111);
    EXPECT_EQ(r.event.event_type, "INTERVAL_START");
    EXPECT_EQ(r.event.metadata["lineno"], 145);
}

TEST(MllogParse, InvalidJsonIsABadLineWithTheParserMessage) {
    for (const char* line : {":::MLLOG ", ":::MLLOG {", ":::MLLOG {\"key\": }",
                             ":::MLLOG {\"a\": 1} trailing", ":::MLLOG NaN", ":::MLLOG {\"a\": NaN}"}) {
        const MllogParseResult r = parse_mllog_line(line);
        EXPECT_EQ(r.kind, MllogLineKind::kBadMllog) << line;
        EXPECT_NE(r.error.find("parse error"), std::string::npos) << r.error;
    }
}

TEST(MllogParse, NonObjectJsonIsABadLine) {
    const struct {
        const char* line;
        const char* type;
    } cases[] = {{":::MLLOG [1, 2]", "array"},
                 {":::MLLOG 42", "number"},
                 {":::MLLOG \"s\"", "string"},
                 {":::MLLOG null", "null"},
                 {":::MLLOG true", "boolean"}};
    for (const auto& c : cases) {
        const MllogParseResult r = parse_mllog_line(c.line);
        EXPECT_EQ(r.kind, MllogLineKind::kBadMllog) << c.line;
        EXPECT_NE(r.error.find(c.type), std::string::npos) << r.error;
    }
}

TEST(MllogParse, InvalidUtf8IsABadLineWithAValidUtf8Message) {
    const std::string line = std::string(":::MLLOG {\"key\": \"a\xff\xfe") + "\", \"value\": 1}";
    const MllogParseResult r = parse_mllog_line(line);
    EXPECT_EQ(r.kind, MllogLineKind::kBadMllog);
    EXPECT_FALSE(r.error.empty());
    EXPECT_NO_THROW(MllogJson(r.error).dump());  // strict UTF-8 check would throw on raw bytes
    // Invalid bytes outside the JSON (before the marker) do not matter.
    const MllogParseResult ok = parse_mllog_line(std::string("\xff\xfe: ") + ":::MLLOG {\"key\": \"k\"}");
    EXPECT_EQ(ok.kind, MllogLineKind::kEvent);
}

TEST(MllogParse, MissingFieldsTakeDefaults) {
    const MllogParseResult r = parse_mllog_line(":::MLLOG {}");
    ASSERT_EQ(r.kind, MllogLineKind::kEvent);
    EXPECT_EQ(r.event.ns, "");
    EXPECT_EQ(r.event.time_ms, 0);
    EXPECT_EQ(r.event.event_type, "");
    EXPECT_EQ(r.event.key, "");
    EXPECT_TRUE(r.event.value.is_null());
    EXPECT_TRUE(r.event.metadata.is_object());
    EXPECT_FALSE(r.event.samples_count().has_value());
}

TEST(MllogParse, WrongTypesTakeDefaultsWithoutThrowing) {
    const MllogParseResult r = parse_mllog_line(
        R"(:::MLLOG {"namespace": 3, "time_ms": "soon", "event_type": [], "key": {}, "value": {"x": [1]}, )"
        R"("metadata": "file.py"})");
    ASSERT_EQ(r.kind, MllogLineKind::kEvent);
    EXPECT_EQ(r.event.ns, "");
    EXPECT_EQ(r.event.time_ms, 0);
    EXPECT_EQ(r.event.event_type, "");
    EXPECT_EQ(r.event.key, "");
    EXPECT_EQ(r.event.value, MllogJson::parse(R"({"x": [1]})"));
    EXPECT_EQ(r.event.metadata, "file.py");
    EXPECT_FALSE(r.event.samples_count().has_value());
    EXPECT_FALSE(r.event.metadata_string("status").has_value());

    const MllogParseResult s =
        parse_mllog_line(R"(:::MLLOG {"time_ms": 1715065028111.9, )"
                         R"("metadata": {"samples_count": "1536", "step_num": 3.5, "status": 1}})");
    ASSERT_EQ(s.kind, MllogLineKind::kEvent);
    EXPECT_EQ(s.event.time_ms, 1715065028111);
    EXPECT_FALSE(s.event.samples_count().has_value());
    EXPECT_EQ(s.event.step_num(), 3.5);
    EXPECT_FALSE(s.event.metadata_string("status").has_value());

    for (const char* t : {"1e300", "-1e300", "18446744073709551615", "true"}) {
        const MllogParseResult u = parse_mllog_line(std::string(":::MLLOG {\"time_ms\": ") + t + "}");
        ASSERT_EQ(u.kind, MllogLineKind::kEvent) << t;
        EXPECT_EQ(u.event.time_ms, 0) << t;
    }
}

TEST(MllogParse, DeepNestingIsABadLineNotACrash) {
    const std::string deep =
        ":::MLLOG {\"value\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
    const MllogParseResult r = parse_mllog_line(deep);
    EXPECT_EQ(r.kind, MllogLineKind::kBadMllog);
    EXPECT_NE(r.error.find("deeper"), std::string::npos) << r.error;

    // Brackets inside strings do not count; moderate nesting parses.
    const std::string fine = ":::MLLOG {\"key\": \"" + std::string(1000, '[') +
                             "\", \"value\": " + std::string(500, '[') + std::string(500, ']') + "}";
    const MllogParseResult ok = parse_mllog_line(fine);
    ASSERT_EQ(ok.kind, MllogLineKind::kEvent) << ok.error;
    EXPECT_EQ(ok.event.key, std::string(1000, '['));
}

TEST(MllogParse, TrailingCarriageReturnIsWhitespace) {
    const MllogParseResult r = parse_mllog_line(":::MLLOG {\"key\": \"k\"}\r");
    ASSERT_EQ(r.kind, MllogLineKind::kEvent);
    EXPECT_EQ(r.event.key, "k");
}

}  // namespace
}  // namespace slipway
