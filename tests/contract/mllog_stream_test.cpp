// Tests of the incremental MLLOG reader: line rules, chunking invariance, overlong lines, hostile bytes.
#include "contract/mllog_stream.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace slipway {
namespace {

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.is_open()) << path;
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string real_logs() {
    std::string all;
    for (const char* name :
         {"dell-xe9680-result_0.txt", "fujitsu-gx2560m7-result_0.txt", "juniper-h100n1-result_0.txt"}) {
        all += read_bytes(std::string(test_paths::test_data_dir("/mlperf-logs/")) + name);
    }
    return all;
}

// Everything an item carries, as one comparable string.
std::string describe(const MllogStreamItem& item) {
    std::string s = std::to_string(item.line_number) + "|" + std::to_string(static_cast<int>(item.kind)) +
                    "|" + (item.truncated ? "T" : "-") + "|" + item.text + "|" + item.error;
    if (item.kind == MllogLineKind::kEvent) s += "|" + format_mllog_line(item.event);
    return s;
}

struct Collected {
    std::vector<MllogStreamItem> items;
    int64_t lines = 0;
    int64_t mllog_lines = 0;
    int64_t bad_lines = 0;
    size_t max_pending = 0;
};

// Feeds `bytes` in chunks whose sizes come from `next_size`, then finish().
template <typename NextSize>
Collected run(const std::string& bytes, NextSize next_size,
              size_t max_line = MllogStream::kDefaultMaxLineBytes) {
    Collected c;
    MllogStream stream([&c](MllogStreamItem&& item) { c.items.push_back(std::move(item)); }, max_line);
    size_t pos = 0;
    while (pos < bytes.size()) {
        const size_t n = std::min(next_size(), bytes.size() - pos);
        stream.feed(std::string_view(bytes).substr(pos, n));
        c.max_pending = std::max(c.max_pending, stream.pending_bytes());
        pos += n;
    }
    stream.finish();
    c.lines = stream.lines();
    c.mllog_lines = stream.mllog_lines();
    c.bad_lines = stream.bad_lines();
    return c;
}

Collected run_whole(const std::string& bytes, size_t max_line = MllogStream::kDefaultMaxLineBytes) {
    return run(
        bytes, [&bytes] { return bytes.size(); }, max_line);
}

// The invariants every run must keep, whatever the input.
void expect_consistent(const Collected& c) {
    ASSERT_EQ(c.lines, static_cast<int64_t>(c.items.size()));
    int64_t mllog = 0;
    int64_t bad = 0;
    for (size_t i = 0; i < c.items.size(); ++i) {
        const MllogStreamItem& item = c.items[i];
        EXPECT_EQ(item.line_number, static_cast<int64_t>(i + 1));
        EXPECT_EQ(item.text.find('\n'), std::string::npos);
        if (item.kind != MllogLineKind::kText) ++mllog;
        if (item.kind == MllogLineKind::kBadMllog) {
            ++bad;
            EXPECT_FALSE(item.error.empty());
        }
        EXPECT_EQ(item.kind != MllogLineKind::kText, item.text.find(":::MLLOG ") != std::string::npos);
    }
    EXPECT_EQ(c.mllog_lines, mllog);
    EXPECT_EQ(c.bad_lines, bad);
}

// Lines of `bytes` by the rule, counted without the stream: every '\n' ends one, plus a final piece.
int64_t count_lines(const std::string& bytes) {
    const auto newlines = std::count(bytes.begin(), bytes.end(), '\n');
    return newlines + (!bytes.empty() && bytes.back() != '\n' ? 1 : 0);
}

std::vector<std::string> descriptions(const Collected& c) {
    std::vector<std::string> out;
    for (const MllogStreamItem& item : c.items)
        out.push_back(describe(item));
    return out;
}

TEST(MllogStream, ClassifiesAndNumbersLines) {
    const std::string bytes =
        "plain\n"
        "crlf\r\n"
        ":::MLLOG {\"key\": \"run_start\", \"time_ms\": 5}\n"
        "0: :::MLLOG {\"key\": \"eval_accuracy\", \"value\": 0.93, \"metadata\": {\"samples_count\": "
        "1536}}\r\n"
        "0: :::MLLOG {bad json\n"
        ":::MLLOG [1]\n"
        "\n"
        "last";
    const Collected c = run_whole(bytes);
    expect_consistent(c);
    ASSERT_EQ(c.items.size(), 8u);
    EXPECT_EQ(c.lines, 8);
    EXPECT_EQ(c.mllog_lines, 4);
    EXPECT_EQ(c.bad_lines, 2);

    EXPECT_EQ(c.items[0].kind, MllogLineKind::kText);
    EXPECT_EQ(c.items[0].text, "plain");
    EXPECT_EQ(c.items[1].text, "crlf");
    EXPECT_EQ(c.items[2].kind, MllogLineKind::kEvent);
    EXPECT_EQ(c.items[2].event.key, "run_start");
    EXPECT_EQ(c.items[2].event.time_ms, 5);
    EXPECT_EQ(c.items[3].kind, MllogLineKind::kEvent);
    EXPECT_EQ(c.items[3].event.samples_count(), 1536.0);
    EXPECT_EQ(c.items[3].text.back(), '}');  // '\r' dropped
    EXPECT_EQ(c.items[4].kind, MllogLineKind::kBadMllog);
    EXPECT_NE(c.items[4].error.find("parse error"), std::string::npos);
    EXPECT_EQ(c.items[5].kind, MllogLineKind::kBadMllog);
    EXPECT_NE(c.items[5].error.find("array"), std::string::npos);
    EXPECT_EQ(c.items[6].kind, MllogLineKind::kText);
    EXPECT_EQ(c.items[6].text, "");
    EXPECT_EQ(c.items[7].text, "last");
    EXPECT_EQ(c.items[7].line_number, 8);
}

TEST(MllogStream, FinalUnterminatedLineWaitsForFinish) {
    std::vector<std::string> texts;
    MllogStream stream([&texts](MllogStreamItem&& item) { texts.push_back(item.text); });
    stream.feed("one\ntw");
    EXPECT_EQ(texts, std::vector<std::string>{"one"});
    EXPECT_EQ(stream.pending_bytes(), 2u);
    stream.feed("o\r");
    EXPECT_EQ(texts.size(), 1u);
    stream.finish();
    EXPECT_EQ(texts,
              (std::vector<std::string>{"one", "two"}));  // trailing '\r' of the last piece dropped too
    EXPECT_EQ(stream.pending_bytes(), 0u);
    stream.finish();  // nothing pending: no empty extra line
    EXPECT_EQ(stream.lines(), 2);
    stream.feed("three\n");  // a stream can go on after finish() (a log that grew)
    EXPECT_EQ(texts.back(), "three");
    EXPECT_EQ(stream.lines(), 3);
}

TEST(MllogStream, EmptyInputHasNoLines) {
    const Collected c = run_whole("");
    EXPECT_EQ(c.lines, 0);
    EXPECT_TRUE(c.items.empty());
}

TEST(MllogStream, OnlyOneTrailingCarriageReturnIsDropped) {
    const Collected c = run_whole("a\r\r\nb\rc\n\r\n\r");
    ASSERT_EQ(c.items.size(), 4u);
    EXPECT_EQ(c.items[0].text, "a\r");
    EXPECT_EQ(c.items[1].text, "b\rc");
    EXPECT_EQ(c.items[2].text, "");
    EXPECT_EQ(c.items[3].text, "");
}

TEST(MllogStream, RealLogsGiveTheSameItemsInAnyChunking) {
    const std::string bytes = real_logs() + "tail without newline :::MLLOG {\"key\": \"x\"";
    const Collected whole = run_whole(bytes);
    expect_consistent(whole);
    EXPECT_EQ(whole.lines, count_lines(bytes));
    EXPECT_EQ(whole.lines, 699 + 757 + 89 + 1);
    EXPECT_EQ(whole.mllog_lines, 52 + 52 + 89 + 1);
    EXPECT_EQ(whole.bad_lines, 1);
    const std::vector<std::string> expected = descriptions(whole);

    EXPECT_EQ(descriptions(run(bytes, [] { return size_t{1}; })), expected) << "byte by byte";
    for (uint32_t seed = 1; seed <= 60; ++seed) {
        std::mt19937 rng(seed);
        // Mostly small chunks (cuts inside "\r\n" and ":::MLLOG "), sometimes large ones.
        std::uniform_int_distribution<size_t> small(1, 16);
        std::uniform_int_distribution<size_t> large(1, 20000);
        std::bernoulli_distribution pick_large(0.2);
        const Collected c = run(bytes, [&] { return pick_large(rng) ? large(rng) : small(rng); });
        EXPECT_EQ(c.lines, whole.lines);
        EXPECT_EQ(c.mllog_lines, whole.mllog_lines);
        EXPECT_EQ(c.bad_lines, whole.bad_lines);
        ASSERT_EQ(descriptions(c), expected) << "seed " << seed;
    }
}

TEST(MllogStream, OverlongLinesAreCutOnceAndReported) {
    const size_t cap = 16;
    const std::string bytes = std::string(16, 'a') + "\n" +  // exactly the cap: intact
                              std::string(17, 'b') + "\n" +  // one over: cut
                              "x :::MLLOG {\"key\": \"this is far too long\"}\n" + "short\n" +
                              std::string(40, 'c');  // unterminated and overlong
    const Collected c = run_whole(bytes, cap);
    expect_consistent(c);
    ASSERT_EQ(c.items.size(), 5u);
    EXPECT_FALSE(c.items[0].truncated);
    EXPECT_EQ(c.items[0].text, std::string(16, 'a'));
    EXPECT_TRUE(c.items[1].truncated);
    EXPECT_EQ(c.items[1].kind, MllogLineKind::kText);
    EXPECT_EQ(c.items[1].text, std::string(16, 'b'));
    EXPECT_TRUE(c.items[2].truncated);
    EXPECT_EQ(c.items[2].kind, MllogLineKind::kBadMllog);
    EXPECT_EQ(c.items[2].text, "x :::MLLOG {\"key");
    EXPECT_NE(c.items[2].error.find("longer than 16 bytes"), std::string::npos) << c.items[2].error;
    EXPECT_EQ(c.items[3].text, "short");
    EXPECT_EQ(c.items[3].line_number, 4);
    EXPECT_TRUE(c.items[4].truncated);
    EXPECT_EQ(c.items[4].text, std::string(16, 'c'));
    EXPECT_EQ(c.lines, 5);
    EXPECT_EQ(c.bad_lines, 1);

    for (uint32_t seed = 1; seed <= 50; ++seed) {
        std::mt19937 rng(seed);
        std::uniform_int_distribution<size_t> sizes(1, 24);
        const Collected chunked = run(
            bytes, [&] { return sizes(rng); }, cap);
        ASSERT_EQ(descriptions(chunked), descriptions(c)) << "seed " << seed;
        EXPECT_LE(chunked.max_pending, cap);  // memory stays bounded by the cap
    }
}

TEST(MllogStream, HugeLineWithoutNewlineKeepsMemoryBounded) {
    const size_t cap = 1 << 16;
    Collected c;
    MllogStream stream([&c](MllogStreamItem&& item) { c.items.push_back(std::move(item)); }, cap);
    const std::string chunk(4096, 'z');
    for (int i = 0; i < 1000; ++i) {  // 4 MB with no '\n'
        stream.feed(chunk);
        ASSERT_LE(stream.pending_bytes(), cap);
    }
    stream.feed("\nnext\n");
    stream.finish();
    ASSERT_EQ(c.items.size(), 2u);
    EXPECT_TRUE(c.items[0].truncated);
    EXPECT_EQ(c.items[0].text.size(), cap);
    EXPECT_EQ(c.items[1].text, "next");
    EXPECT_EQ(c.items[1].line_number, 2);
}

// Random bytes biased towards the characters that matter (newlines, markers, JSON syntax, non-UTF-8).
std::string random_log(std::mt19937& rng, size_t size) {
    static const std::vector<std::string> pieces = {"\n",
                                                    "\r\n",
                                                    "\r",
                                                    ":::MLLOG ",
                                                    "0: ",
                                                    "{",
                                                    "}",
                                                    "[",
                                                    "]",
                                                    "\"",
                                                    "\\",
                                                    ":",
                                                    ",",
                                                    " ",
                                                    "null",
                                                    "1.5e-05",
                                                    "\"key\"",
                                                    "\"run_stop\"",
                                                    "\"metadata\"",
                                                    "\"samples_count\"",
                                                    "\xff",
                                                    "\xc3\xa9",
                                                    "\xc3",
                                                    "\xed\xa0\x80",
                                                    "\xf0\x9f\x98\x80",
                                                    std::string(1, '\0'),
                                                    "true",
                                                    ":::MLLOG {\"key\": \"eval_accuracy\", \"value\": 0.9}"};
    std::uniform_int_distribution<size_t> which(0, pieces.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    std::bernoulli_distribution raw(0.3);
    std::string out;
    while (out.size() < size) {
        if (raw(rng)) {
            out += static_cast<char>(byte(rng));
        } else {
            out += pieces[which(rng)];
        }
    }
    out.resize(size);
    return out;
}

TEST(MllogStream, RandomBytesNeverCrashAndCountsStayConsistent) {
    for (uint32_t seed = 1; seed <= 300; ++seed) {
        std::mt19937 rng(seed);
        std::uniform_int_distribution<size_t> length(0, 3000);
        const std::string bytes = random_log(rng, length(rng));
        const Collected whole = run_whole(bytes);
        expect_consistent(whole);
        EXPECT_EQ(whole.lines, count_lines(bytes)) << "seed " << seed;

        std::uniform_int_distribution<size_t> sizes(1, 64);
        const Collected chunked = run(bytes, [&] { return sizes(rng); });
        ASSERT_EQ(descriptions(chunked), descriptions(whole)) << "seed " << seed;

        const Collected capped = run(
            bytes, [&] { return sizes(rng); }, 32);  // many overlong lines
        expect_consistent(capped);
        EXPECT_EQ(capped.lines, count_lines(bytes)) << "seed " << seed;
        EXPECT_EQ(descriptions(capped), descriptions(run_whole(bytes, 32))) << "seed " << seed;
    }
}

TEST(MllogStream, EveryTruncationOfARealLogIsHandled) {
    const std::string bytes =
        read_bytes(std::string(test_paths::test_data_dir("/mlperf-logs/juniper-h100n1-result_0.txt")));
    const Collected full = run_whole(bytes);
    for (size_t cut = 0; cut <= bytes.size(); cut += 37) {
        const std::string prefix = bytes.substr(0, cut);
        const Collected c = run_whole(prefix);
        expect_consistent(c);
        EXPECT_EQ(c.lines, count_lines(prefix));
        // Every complete line is exactly as in the full log; only the cut last line may differ (bad).
        const bool cut_mid_line = !prefix.empty() && prefix.back() != '\n';
        const size_t complete = c.items.size() - (cut_mid_line ? 1 : 0);
        for (size_t i = 0; i < complete; ++i)
            ASSERT_EQ(describe(c.items[i]), describe(full.items[i])) << cut;
        EXPECT_LE(c.bad_lines, 1);
    }
}

}  // namespace
}  // namespace slipway
