// LogFollower: `tail -f` of a log from a byte offset, over a LogSource (a local file, or one on the login
// node over a Session): the app's monitor, `slipway follow` and the image build log all follow through it.
// It hands out complete lines only (an unterminated last line waits for its '\n'), each classified by the
// contract's MLLOG parser; a file that does not exist yet (a pending job) is not an error; a file that
// shrank was truncated or replaced, so reading restarts at 0 and says so; a lost connection is reconnected
// and the read retried from the offset of the last delivered line, so no line is lost or delivered twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "contract/mllog_stream.h"
#include "contract/status.h"
#include "remote/runlog/log_source.h"

namespace slipway::remote {

struct FollowerOptions {
    std::size_t chunk_bytes = std::size_t{4} << 20;           // one read
    std::size_t max_bytes_per_poll = std::size_t{256} << 20;  // a poll catches up at most this much
    int reconnect_attempts = 3;                               // per poll, when the connection is lost
    // A line longer than this is delivered cut (see MllogStream); the follower then holds at most this
    // plus one chunk for a line whose '\n' has not arrived, however long the line grows.
    std::size_t max_line_bytes = MllogStream::kDefaultMaxLineBytes;
};

struct PollResult {
    bool file_exists = false;
    bool restarted = false;        // the file shrank: reading began again at byte 0
    bool behind = false;           // the poll stopped at max_bytes_per_poll: more is waiting
    std::uint64_t bytes_read = 0;  // from the source this poll
    std::int64_t lines = 0;        // complete lines delivered this poll
    int reconnects = 0;
};

class LogFollower {
public:
    using Sink = MllogStream::Sink;

    // Delivers lines from byte `offset` of the source's file (0: the whole file). `offset` must be a line
    // start, e.g. a value offset() returned earlier.
    LogFollower(std::unique_ptr<LogSource> source, Sink sink, std::uint64_t offset = 0,
                FollowerOptions options = {});
    LogFollower(const LogFollower&) = delete;  // the stream's sink points at this object
    LogFollower& operator=(const LogFollower&) = delete;

    // Reads what is new and delivers its complete lines. Errors only for what a retry will not fix: the
    // connection could not be re-established, or the read failed for another reason.
    Result<PollResult> poll();
    // The writer has ended: delivers an unterminated last line (already read) as a line of its own.
    void finish();
    // The writer has ended: polls until nothing is waiting, then finish(). The result sums the polls
    // (restarted when any of them restarted).
    Result<PollResult> read_to_end();

    // Bytes of the file that were delivered as lines (or handed to the stream as the kept start of an
    // overlong line): where a new follower would start.
    std::uint64_t offset() const { return offset_; }
    // Read but held back: the start of a line whose '\n' has not arrived.
    std::size_t held_bytes() const { return partial_.size(); }
    const std::string& path() const { return source_->path(); }
    std::int64_t lines() const { return total_lines_; }

private:
    // One read with reconnects; kNotFound passes through.
    Result<std::string> read_with_reconnect(std::uint64_t position, PollResult& result);
    Result<std::optional<std::uint64_t>> size_with_reconnect(PollResult& result);
    void deliver(std::string_view complete_lines);
    void restart();
    void new_stream();

    std::unique_ptr<LogSource> source_;
    Sink sink_;
    FollowerOptions options_;
    std::unique_ptr<MllogStream> stream_;
    std::uint64_t offset_ = 0;
    std::string partial_;
    std::int64_t total_lines_ = 0;
};

}  // namespace slipway::remote
