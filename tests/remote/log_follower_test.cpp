// Tests of LogFollower over FakeSession (SessionFileSource): complete lines only, MLLOG events parsed, a file
// that does not exist yet, truncation, and dropped connections at every point of a long log without a lost or
// repeated line.
#include <gtest/gtest.h>

#include <random>

#include "remote/runlog/log_follower.h"
#include "remote/ssh/fake_session.h"

namespace slipway::remote {
namespace {

constexpr const char* kLog = "/home/u/runs/r1/slurm-42.out";

struct Collected {
    std::vector<MllogStreamItem> items;
    std::vector<std::string> texts() const {
        std::vector<std::string> out;
        for (const auto& i : items)
            out.push_back(i.text);
        return out;
    }
};

LogFollower::Sink into(Collected& c) {
    return [&c](MllogStreamItem&& item) { c.items.push_back(std::move(item)); };
}

TEST(LogFollower, MissingFileIsPendingNotAnError) {
    FakeSession session;
    Collected got;
    LogFollower follower(std::make_unique<SessionFileSource>(session, kLog), into(got));
    Result<PollResult> r = follower.poll();
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_FALSE(r->file_exists);
    EXPECT_EQ(r->lines, 0);
    session.put_file(kLog, "slipway: job 42 on 1 node(s)\n");
    r = follower.poll();
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_TRUE(r->file_exists);
    EXPECT_EQ(got.texts(), std::vector<std::string>{"slipway: job 42 on 1 node(s)"});
}

TEST(LogFollower, ReadToEndTakesEveryPollAndTheLastUnterminatedLine) {
    FakeSession session;
    std::string text;
    for (int i = 0; i < 100; ++i)
        text += "line " + std::to_string(i) + "\n";
    text += "last";
    session.put_file(kLog, text);
    FollowerOptions options;
    options.chunk_bytes = 64;
    options.max_bytes_per_poll = 128;  // several polls' worth
    Collected got;
    LogFollower follower(std::make_unique<SessionFileSource>(session, kLog), into(got), 0, options);
    const Result<PollResult> r = follower.read_to_end();
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->lines, 101);
    EXPECT_EQ(r->bytes_read, text.size());
    ASSERT_EQ(got.items.size(), 101u);
    EXPECT_EQ(got.items[99].text, "line 99");
    EXPECT_EQ(got.items[100].text, "last");
    EXPECT_EQ(follower.offset(), text.size());
}

TEST(LogFollower, PartialLastLineWaitsForItsNewline) {
    FakeSession session;
    session.put_file(kLog, "first\nsec");
    Collected got;
    LogFollower follower(std::make_unique<SessionFileSource>(session, kLog), into(got));
    ASSERT_TRUE(follower.poll().ok());
    EXPECT_EQ(got.texts(), std::vector<std::string>{"first"});
    EXPECT_EQ(follower.offset(), 6u);
    EXPECT_EQ(follower.held_bytes(), 3u);
    session.append_file(kLog, "ond\r\nthi");
    ASSERT_TRUE(follower.poll().ok());
    EXPECT_EQ(got.texts(), (std::vector<std::string>{"first", "second"}));
    follower.finish();  // the job ended without a final newline
    EXPECT_EQ(got.texts(), (std::vector<std::string>{"first", "second", "thi"}));
    EXPECT_EQ(follower.offset(), session.file(kLog).size());
}

TEST(LogFollower, AnUnendingLineIsHeldBoundedAndDeliveredCut) {
    FakeSession session;
    session.put_file(kLog, "first\n");
    Collected got;
    FollowerOptions options;
    options.chunk_bytes = 16;
    options.max_line_bytes = 64;
    LogFollower follower(std::make_unique<SessionFileSource>(session, kLog), into(got), 0, options);
    for (int i = 0; i < 100; ++i) {  // a rank printing a progress bar without '\n' for ever
        session.append_file(kLog, std::string(10, 'x'));
        ASSERT_TRUE(follower.poll().ok());
        EXPECT_LE(follower.held_bytes(), options.max_line_bytes + options.chunk_bytes);
    }
    session.append_file(kLog, "\nnext\n");
    ASSERT_TRUE(follower.poll().ok());
    ASSERT_EQ(got.items.size(), 3u);
    EXPECT_EQ(got.items[1].text, std::string(64, 'x'));
    EXPECT_TRUE(got.items[1].truncated);
    EXPECT_EQ(got.items[2].text, "next");
    EXPECT_EQ(follower.offset(), session.file(kLog).size());
}

TEST(LogFollower, MllogLinesAreParsedBehindSrunPrefixes) {
    FakeSession session;
    session.put_file(kLog,
                     "0: :::MLLOG {\"namespace\": \"\", \"time_ms\": 1700000000000, \"event_type\": "
                     "\"POINT_IN_TIME\", \"key\": \"train_loss\", \"value\": 2.5, \"metadata\": {\"file\": "
                     "\"t.cpp\", \"lineno\": 1, \"samples_count\": 64}}\n"
                     "plain text\n"
                     ":::MLLOG {broken\n");
    Collected got;
    LogFollower follower(std::make_unique<SessionFileSource>(session, kLog), into(got));
    Result<PollResult> r = follower.poll();
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_EQ(got.items.size(), 3u);
    EXPECT_EQ(got.items[0].kind, MllogLineKind::kEvent);
    EXPECT_EQ(got.items[0].event.key, "train_loss");
    EXPECT_DOUBLE_EQ(got.items[0].event.value.get<double>(), 2.5);
    EXPECT_EQ(got.items[0].event.samples_count(), 64.0);
    EXPECT_EQ(got.items[1].kind, MllogLineKind::kText);
    EXPECT_EQ(got.items[2].kind, MllogLineKind::kBadMllog);
    EXPECT_EQ(got.items[2].line_number, 3);
}

TEST(LogFollower, TruncatedFileRestartsFromZeroAndSaysSo) {
    FakeSession session;
    session.put_file(kLog, "one\ntwo\nthree\n");
    Collected got;
    LogFollower follower(std::make_unique<SessionFileSource>(session, kLog), into(got));
    ASSERT_TRUE(follower.poll().ok());
    session.put_file(kLog, "new\n");  // a requeued job rewrote its log
    Result<PollResult> r = follower.poll();
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_TRUE(r->restarted);
    EXPECT_EQ(got.texts(), (std::vector<std::string>{"one", "two", "three", "new"}));
    EXPECT_EQ(got.items.back().line_number, 1);
    EXPECT_EQ(follower.offset(), 4u);
}

TEST(LogFollower, ANewFollowerContinuesFromTheOffset) {
    FakeSession session;
    session.put_file(kLog, "a\nb\nc");
    Collected first;
    std::uint64_t offset = 0;
    {
        LogFollower follower(std::make_unique<SessionFileSource>(session, kLog), into(first));
        ASSERT_TRUE(follower.poll().ok());
        offset = follower.offset();
    }
    session.append_file(kLog, "\nd\n");
    Collected second;
    LogFollower again(std::make_unique<SessionFileSource>(session, kLog), into(second), offset);
    ASSERT_TRUE(again.poll().ok());
    EXPECT_EQ(first.texts(), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(second.texts(), (std::vector<std::string>{"c", "d"}));
}

// A long log written in random pieces while the connection drops at random calls: the delivered lines are
// exactly the file's lines, in order, once each.
TEST(LogFollower, DroppedConnectionsLoseAndRepeatNothing) {
    FakeSession session;
    std::vector<std::string> expected;
    std::string file;
    for (int i = 0; i < 2000; ++i) {
        expected.push_back(i % 3 ? "step " + std::to_string(i) + " loss " + std::to_string(1.0 / (i + 1))
                                 : "0: :::MLLOG {\"key\": \"train_loss\", \"value\": " + std::to_string(i) +
                                       "}");
        file += expected.back() + "\n";
    }
    std::mt19937 rng(7);
    FollowerOptions options;
    options.chunk_bytes = 37;  // many reads per poll, lines split across reads
    Collected got;
    LogFollower follower(std::make_unique<SessionFileSource>(session, kLog), into(got), 0, options);
    size_t written = 0;
    int reconnects = 0;
    while (written < file.size() || follower.offset() < file.size()) {
        const size_t piece = std::min<size_t>(file.size() - written, rng() % 500);
        if (written == 0) {
            session.put_file(kLog, file.substr(0, piece));
        } else {
            session.append_file(kLog, file.substr(written, piece));
        }
        written += piece;
        if (rng() % 3 == 0) session.fail_next(FakeFault::kDropConnection, 1 + rng() % 2);
        Result<PollResult> r = follower.poll();
        ASSERT_TRUE(r.ok()) << r.error();
        reconnects += r->reconnects;
    }
    EXPECT_GT(reconnects, 50);
    EXPECT_EQ(got.texts(), expected);
    EXPECT_EQ(follower.offset(), file.size());
}

TEST(LogFollower, FailuresLeaveTheOffsetWhereItWas) {
    FakeSession session;
    session.put_file(kLog, "a\n");
    Collected got;
    LogFollower follower(std::make_unique<SessionFileSource>(session, kLog), into(got));
    ASSERT_TRUE(follower.poll().ok());
    session.append_file(kLog, "b\n");
    session.fail_next(FakeFault::kTimeout);
    Result<PollResult> r = follower.poll();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.code(), StatusCode::kTimeout);
    EXPECT_NE(r.error().find(kLog), std::string::npos);
    EXPECT_EQ(follower.offset(), 2u);
    // The server refuses every reconnect: an error after the allowed attempts, nothing delivered twice.
    session.fail_next(FakeFault::kDropConnection);
    session.fail_next(FakeFault::kAuthFailure, 10);
    r = follower.poll();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(follower.offset(), 2u);
    while (!session.is_connected())
        (void)session.reconnect();
    ASSERT_TRUE(follower.poll().ok());
    EXPECT_EQ(got.texts(), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace slipway::remote
