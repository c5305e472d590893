// Differential tests of the MLLOG fast scanner: parse_mllog_line() (scanner, nlohmann fallback) must give
// exactly what the nlohmann-only reference gives (kind, error text, every field, JSON types, key order,
// float bits) on real logs, on every MLLOG line in the test sources, on adversarial and mutated lines and
// on random JSON; and the scanner must really take the lines real loggers write.
#include "contract/mllog_scan.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace slipway {
namespace {

namespace fs = std::filesystem;
using mllog_detail::parse_mllog_line_reference;
using mllog_detail::scan_mllog_payload;

std::string read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.is_open()) << path;
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> split_lines(const std::string& bytes) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < bytes.size()) {
        size_t end = bytes.find('\n', start);
        if (end == std::string::npos) end = bytes.size();
        lines.push_back(bytes.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

// Equal as values and as types: nlohmann's == calls 1 (unsigned) and 1 (signed) equal, and 0.0 and -0.0.
bool strictly_equal(const MllogJson& a, const MllogJson& b) {
    if (a.type() != b.type()) return false;
    switch (a.type()) {
        case MllogJson::value_t::object: {
            if (a.size() != b.size()) return false;
            auto ia = a.items().begin();
            auto ib = b.items().begin();
            for (; ia != a.items().end(); ++ia, ++ib) {
                if (ia.key() != ib.key() || !strictly_equal(ia.value(), ib.value())) return false;
            }
            return true;
        }
        case MllogJson::value_t::array: {
            if (a.size() != b.size()) return false;
            for (size_t i = 0; i < a.size(); ++i) {
                if (!strictly_equal(a[i], b[i])) return false;
            }
            return true;
        }
        case MllogJson::value_t::number_float: {
            const double x = a.get<double>(), y = b.get<double>();
            return std::memcmp(&x, &y, sizeof x) == 0;
        }
        default:
            return a == b;
    }
}

// Why two results differ, or "" when they are the same.
std::string difference(const MllogParseResult& fast, const MllogParseResult& reference) {
    if (fast.kind != reference.kind) return "kind";
    if (fast.error != reference.error) return "error: \"" + fast.error + "\" vs \"" + reference.error + "\"";
    const MllogEvent& a = fast.event;
    const MllogEvent& b = reference.event;
    if (a.ns != b.ns) return "namespace";
    if (a.time_ms != b.time_ms) return "time_ms";
    if (a.event_type != b.event_type) return "event_type";
    if (a.key != b.key) return "key";
    if (!strictly_equal(a.value, b.value)) return "value";
    if (!strictly_equal(a.metadata, b.metadata)) return "metadata";
    return "";
}

// Checks one line; true when the scanner (not the fallback) produced the result.
bool expect_same(const std::string& line) {
    const std::string diff = difference(parse_mllog_line(line), parse_mllog_line_reference(line));
    EXPECT_EQ(diff, "") << "line: " << line;
    const size_t pos = line.find(kMllogPrefix);
    MllogEvent scratch;
    return pos != std::string::npos && scan_mllog_payload(line.substr(pos + kMllogPrefix.size()), scratch);
}

std::string mllog(const std::string& value, const std::string& metadata = "{\"file\": \"a.py\"}") {
    return ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1715065028111, \"event_type\": \"POINT_IN_TIME\", "
           "\"key\": \"k\", \"value\": " +
           value + ", \"metadata\": " + metadata + "}";
}

// The real logs: tests/data/mlperf-logs, plus any folders in SLIPWAY_EXTRA_MLLOG_DIRS (':'-separated).
std::vector<fs::path> real_logs() {
    std::vector<fs::path> dirs = {fs::path(test_paths::test_data_dir()) / "mlperf-logs"};
    if (const char* extra = std::getenv("SLIPWAY_EXTRA_MLLOG_DIRS")) {
        std::string dir;
        for (const char* c = extra;; ++c) {
            if (*c != ':' && *c != '\0') {
                dir += *c;
                continue;
            }
            if (!dir.empty()) dirs.emplace_back(dir);
            dir.clear();
            if (*c == '\0') break;
        }
    }
    std::vector<fs::path> logs;
    for (const fs::path& dir : dirs) {
        for (const auto& entry : fs::directory_iterator(dir)) {
            if (entry.path().extension() == ".txt") logs.push_back(entry.path());
        }
    }
    return logs;
}

TEST(MllogScan, EveryLineOfEveryRealLogParsesAsTheReferenceAndTheScannerTakesEveryEvent) {
    size_t events = 0;
    for (const fs::path& log : real_logs()) {
        for (std::string line : split_lines(read_bytes(log))) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            const bool scanned = expect_same(line);
            if (line.find(kMllogPrefix) == std::string::npos) continue;
            EXPECT_TRUE(scanned) << log << ": " << line;
            ++events;
        }
    }
    EXPECT_GE(events, 193u);
}

// The MLLOG lines other tests feed the parser, as they stand in the sources (string literals with their
// C++ escapes: mostly bad JSON, which is just as useful here).
TEST(MllogScan, EveryMllogLineInTheTestSourcesParsesAsTheReference) {
    size_t lines = 0;
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(test_paths::source_dir()) / "tests")) {
        const std::string ext = entry.path().extension().string();
        if (ext != ".cpp" && ext != ".h" && ext != ".py" && ext != ".sh") continue;
        for (const std::string& line : split_lines(read_bytes(entry.path()))) {
            if (line.find(kMllogPrefix) == std::string::npos) continue;
            expect_same(line);
            ++lines;
        }
    }
    EXPECT_GT(lines, 20u);
}

TEST(MllogScan, ValuesOfEveryJsonTypeAreScannedAsTheReferenceParsesThem) {
    const char* const values[] = {"null",
                                  "true",
                                  "false",
                                  "0",
                                  "-0",
                                  "1",
                                  "-1",
                                  "1e-5",
                                  "1E+16",
                                  "-0.0",
                                  "0.0004",
                                  "2.5e-308",
                                  "1.7976931348623157e308",
                                  "9223372036854775807",
                                  "9223372036854775808",
                                  "-9223372036854775808",
                                  "-9223372036854775809",
                                  "18446744073709551615",
                                  "18446744073709551616",
                                  "123456789012345678901234567890",
                                  "0.1",
                                  "3.141592653589793238462643383279",
                                  "\"\"",
                                  "\"plain\"",
                                  R"("quote \" backslash \\ slash \/")",
                                  R"("\b\f\n\r\t")",
                                  R"("\u0000 nul")",
                                  R"("\u00e9\u4e2d\uFFFF")",
                                  R"("\ud83d\ude00 surrogate pair")",
                                  R"("\uD834\uDD1E clef")",
                                  "\"raw UTF-8: \xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 \xef\xbf\xbf\"",
                                  "\"\x7f del\"",
                                  "[]",
                                  "{}",
                                  "[1, [2, [3, [4]]], {\"a\": {\"b\": [true, null]}}]",
                                  R"({"z": 1, "a": 2, "m": {"y": [], "b": {}}})",
                                  " \t\r\n[ 1 , 2 ]\t",
                                  R"({"": "empty key"})",
                                  R"({"k\u0065y": "escaped key"})",
                                  R"(["mixed", 1, -2, 3.5, null, false, {"x": "y"}])"};
    for (const char* v : values) {
        EXPECT_TRUE(expect_same(mllog(v))) << v;
        EXPECT_TRUE(expect_same(mllog("1", std::string("{\"file\": \"a.py\", \"extra\": ") + v + "}"))) << v;
    }
    // Top-level fields of every type and in any order, escaped names, whitespace everywhere.
    for (
        const char* line : {
            ":::MLLOG {}",
            ":::MLLOG {\"key\": \"k\"}\r",
            "0: :::MLLOG {\"key\": \"k\"}",
            ":::MLLOG   { \"metadata\" : { } , \"key\" : \"k\" , \"time_ms\" : 1.5e3 }  ",
            R"(:::MLLOG {"namespace": 3, "time_ms": "soon", "event_type": [], "key": {}, "value": {"x": [1]}})",
            R"(:::MLLOG {"time_ms": -5, "metadata": "file.py"})",
            R"(:::MLLOG {"time_ms": 1e300})",
            R"(:::MLLOG {"time_ms": 18446744073709551615})",
            R"(:::MLLOG {"time_ms": 9223372036854775807})",
            R"(:::MLLOG {"time_ms": 1715065028111.9})",
            R"(:::MLLOG {"time_ms": true})",
            R"(:::MLLOG {"k\u0065y": "escaped field name", "\u006eamespace": "ns"})",
            R"(:::MLLOG {"key": "\u00e9t\u00e9", "event_type": "CUSTOM", "other": [1, 2]})",
        }) {
        EXPECT_TRUE(expect_same(line)) << line;
    }
}

TEST(MllogScan, UnusualInputFallsBackToNlohmannWithItsResultAndMessage) {
    const std::string nested_deep = mllog(std::string(100, '[') + std::string(100, ']'));
    const std::string many_keys = [] {
        std::string object = "{";
        for (int i = 0; i < 100; ++i)
            object += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
        return mllog(object + "}");
    }();
    const std::string lines[] = {
        // Valid, but declined: duplicate keys (nlohmann keeps the last value in the first place), deep
        // nesting, big objects, numbers that underflow, a UTF-8 byte order mark.
        R"(:::MLLOG {"key": "a", "key": "b"})",
        R"(:::MLLOG {"value": 1, "value": {"x": 1}, "metadata": {"a": 1, "b": 2, "a": 3}})",
        mllog(R"({"a": 1, "a": [2]})"),
        nested_deep,
        many_keys,
        mllog("1e-400"),
        mllog("-4.9e-325"),
        ":::MLLOG \xef\xbb\xbf{\"key\": \"bom\"}",
        // Invalid: every error must carry nlohmann's message.
        ":::MLLOG ",
        ":::MLLOG {",
        ":::MLLOG {\"key\": }",
        ":::MLLOG {\"a\": 1} trailing",
        ":::MLLOG {\"a\": 1}}",
        ":::MLLOG NaN",
        ":::MLLOG [1, 2]",
        ":::MLLOG 42",
        ":::MLLOG \"s\"",
        ":::MLLOG null",
        mllog("1e400"),
        mllog("-1e400"),
        mllog("01"),
        mllog("1."),
        mllog(".5"),
        mllog("1e"),
        mllog("1e+"),
        mllog("+1"),
        mllog("-"),
        mllog("0x10"),
        mllog("Infinity"),
        mllog("tru"),
        mllog("nul"),
        mllog("[1, 2,]"),
        mllog("{\"a\": 1,}"),
        mllog("{\"a\" 1}"),
        mllog("{a: 1}"),
        mllog("'single'"),
        mllog(R"("\x41")"),
        mllog(R"("\u12")"),
        mllog(R"("\u12G4")"),
        mllog(R"("\ud83d")"),
        mllog(R"("\ud83d\u0041")"),
        mllog(R"("\ude00")"),
        mllog(R"("\ud83d\ud83d")"),
        mllog("\"raw tab\there\""),
        mllog("\"raw newline\nhere\""),
        mllog(std::string("\"raw nul ") + '\0' + " here\""),
        mllog("\"bad utf-8 \xff\xfe\""),
        mllog("\"overlong \xc0\xaf\""),
        mllog("\"surrogate \xed\xa0\x80\""),
        mllog("\"too big \xf4\x90\x80\x80\""),
        mllog("\"truncated \xe4\xb8\""),
        mllog("\"unterminated"),
        mllog("[1, 2"),
        mllog("{\"a\": [1, {\"b\": 2]}"),
        ":::MLLOG {\"key\": \"k\"} // comment",
        ":::MLLOG {\"key\": \"k\"}\v",
    };
    for (const std::string& line : lines)
        EXPECT_FALSE(expect_same(line)) << line;
}

// Each real MLLOG line cut at every byte, and with bytes swapped for ones that matter to JSON.
TEST(MllogScan, TruncatedAndMutatedRealLinesParseAsTheReference) {
    std::vector<std::string> sources;
    for (const fs::path& log : real_logs()) {
        for (const std::string& line : split_lines(read_bytes(log))) {
            if (line.find(kMllogPrefix) != std::string::npos) sources.push_back(line);
        }
    }
    ASSERT_FALSE(sources.empty());
    const std::string swaps = std::string("\"\\{}[],: 0-9e.+Eu\t\r\x7f\xc3\xff") + '\0';
    for (size_t i = 0; i < sources.size(); ++i) {
        const std::string& line = sources[i];
        for (size_t cut = 0; cut < line.size(); ++cut)
            expect_same(line.substr(0, cut));
        if (i % 16 != 0) continue;  // every byte of every line times every swap would take a while
        for (size_t at = line.find(kMllogPrefix) + kMllogPrefix.size(); at < line.size(); ++at) {
            for (const char c : swaps) {
                std::string mutated = line;
                mutated[at] = c;
                expect_same(mutated);
            }
        }
    }
}

// Random JSON text (seeded, so failures reproduce): every type, escapes, raw and escaped Unicode, odd
// whitespace, and now and then a broken token.
class RandomJson {
public:
    explicit RandomJson(uint32_t seed) : rng_(seed) {}

    std::string value(int depth) {
        switch (pick(depth > 3 ? 6 : 8)) {
            case 0:
                return "null";
            case 1:
                return pick(2) ? "true" : "false";
            case 2:
                return integer();
            case 3:
                return real();
            case 4:
            case 5:
                return string();
            case 6: {
                std::string out = "[" + space();
                const int n = pick(4);
                for (int i = 0; i < n; ++i)
                    out += (i ? "," + space() : "") + value(depth + 1) + space();
                return out + "]";
            }
            default: {
                std::string out = "{" + space();
                const int n = pick(4);
                for (int i = 0; i < n; ++i)
                    out += (i ? "," + space() : "") + string() + space() + ":" + space() + value(depth + 1);
                return out + space() + "}";
            }
        }
    }

    std::string line() {
        std::string text = value(1);
        if (pick(20) == 0 && !text.empty())
            text[pick(static_cast<int>(text.size()))] = "\"\\{}[],:x\x80"[pick(10)];
        const char* const meta[] = {"{\"file\": \"a.py\", \"lineno\": 7}", "{}", "null"};
        return mllog(text, meta[pick(3)]);
    }

private:
    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

    std::string space() {
        const char* const spaces[] = {"", "", "", " ", "\t", "\r\n", "  "};
        return spaces[pick(7)];
    }

    std::string integer() {
        std::string out = pick(3) == 0 ? "-" : "";
        const int digits = pick(5) == 0 ? 18 + pick(4) : 1 + pick(6);
        out += static_cast<char>('1' + pick(9));
        for (int i = 1; i < digits; ++i)
            out += static_cast<char>('0' + pick(10));
        return pick(10) == 0 ? out.substr(0, out.size() - digits) + "0" : out;
    }

    std::string real() {
        std::string out = integer();
        if (pick(3)) out += "." + std::to_string(pick(1000000));
        if (pick(2)) out += std::string(pick(2) ? "e" : "E") + "+-"[pick(2)] + std::to_string(pick(330));
        return out;
    }

    std::string string() {
        const char* const pieces[] = {"a",
                                      "key",
                                      " ",
                                      "\\\"",
                                      "\\\\",
                                      "\\/",
                                      "\\n",
                                      "\\t",
                                      "\\b",
                                      "\\f",
                                      "\\r",
                                      "\\u0041",
                                      "\\u00e9",
                                      "\\u4E2D",
                                      "\\ud83d\\ude00",
                                      "\\u0000",
                                      "\xc3\xa9",
                                      "\xe4\xb8\xad",
                                      "\xf0\x9f\x98\x80",
                                      "/",
                                      "[",
                                      "{",
                                      ":"};
        std::string out = "\"";
        const int n = pick(6);
        for (int i = 0; i < n; ++i)
            out += pieces[pick(static_cast<int>(std::size(pieces)))];
        return out + "\"";
    }

    std::mt19937 rng_;
};

TEST(MllogScan, RandomJsonParsesAsTheReference) {
    RandomJson random(20240424);
    int scanned = 0;
    constexpr int kLines = 20000;
    for (int i = 0; i < kLines; ++i)
        scanned += expect_same(random.line()) ? 1 : 0;
    // Most random lines are valid and within the scanner's limits; the rest show the fallback.
    EXPECT_GT(scanned, kLines / 2);
    EXPECT_LT(scanned, kLines);
}

}  // namespace
}  // namespace slipway
