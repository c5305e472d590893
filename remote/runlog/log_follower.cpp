// LogFollower (see log_follower.h). The invariant: offset_ is the end of the last delivered line,
// and partial_ holds exactly the bytes [offset_, offset_ + partial_.size()) of the file, so every read
// continues at offset_ + partial_.size() and a retry after a failure repeats nothing.
#include "remote/runlog/log_follower.h"

#include <utility>

namespace slipway::remote {

LogFollower::LogFollower(std::unique_ptr<LogSource> source, Sink sink, std::uint64_t offset,
                         FollowerOptions options)
    : source_(std::move(source)), sink_(std::move(sink)), options_(options), offset_(offset) {
    if (options_.chunk_bytes == 0) options_.chunk_bytes = 1;
    new_stream();
}

void LogFollower::new_stream() {
    stream_ = std::make_unique<MllogStream>(
        [this](MllogStreamItem&& item) {
            ++total_lines_;
            sink_(std::move(item));
        },
        options_.max_line_bytes);
}

void LogFollower::restart() {
    offset_ = 0;
    partial_.clear();
    new_stream();  // line numbers start again with the new file
}

namespace {

// `call` until it succeeds or fails for another reason than a lost connection, reconnecting in between
// (at most `attempts` times).
template <typename Call>
auto with_reconnect(LogSource& source, int attempts, PollResult& result, Call call) -> decltype(call()) {
    for (int attempt = 0;; ++attempt) {
        auto answer = call();
        if (answer.ok() || answer.code() != StatusCode::kUnavailable || attempt >= attempts) return answer;
        ++result.reconnects;
        if (Status s = source.reconnect(); !s.ok() && attempt + 1 >= attempts) {
            return Status::Error(s.code(), "following " + source.path() + ": " + s.message());
        }
    }
}

}  // namespace

Result<std::string> LogFollower::read_with_reconnect(std::uint64_t position, PollResult& result) {
    return with_reconnect(*source_, options_.reconnect_attempts, result,
                          [&] { return source_->read(position, options_.chunk_bytes); });
}

Result<std::optional<std::uint64_t>> LogFollower::size_with_reconnect(PollResult& result) {
    return with_reconnect(*source_, options_.reconnect_attempts, result, [&] { return source_->size(); });
}

void LogFollower::deliver(std::string_view complete_lines) {
    stream_->feed(complete_lines);
    offset_ += complete_lines.size();
}

Result<PollResult> LogFollower::poll() {
    PollResult result;
    const std::int64_t lines_before = total_lines_;
    while (result.bytes_read < options_.max_bytes_per_poll) {
        const std::uint64_t position = offset_ + partial_.size();
        Result<std::string> bytes = read_with_reconnect(position, result);
        if (!bytes.ok()) {
            if (bytes.code() == StatusCode::kNotFound) {
                result.file_exists = false;  // not yet written (pending job), or removed
                break;
            }
            return Status::Error(bytes.code(), "following " + path() + ": " + bytes.error());
        }
        result.file_exists = true;
        if (bytes->empty()) {
            // Nothing new, or the file is now shorter than what we have read: truncated or replaced.
            Result<std::optional<std::uint64_t>> size = size_with_reconnect(result);
            if (!size.ok()) return Status::Error(size.code(), "following " + path() + ": " + size.error());
            if (*size && **size < position && !result.restarted) {
                restart();
                result.restarted = true;
                continue;
            }
            break;
        }
        result.bytes_read += bytes->size();
        const size_t last_newline = bytes->rfind('\n');
        if (last_newline == std::string::npos) {
            partial_ += *bytes;
        } else if (partial_.empty()) {
            deliver(std::string_view(*bytes).substr(0, last_newline + 1));
            partial_.assign(*bytes, last_newline + 1, std::string::npos);
        } else {
            partial_.append(*bytes, 0, last_newline + 1);
            deliver(partial_);
            partial_.assign(*bytes, last_newline + 1, std::string::npos);
        }
        // An unterminated line past the limit goes to the stream, which keeps its start and drops the rest
        // up to its '\n': memory stays bounded whatever the remote file holds.
        if (partial_.size() > options_.max_line_bytes) {
            deliver(partial_);
            partial_.clear();
        }
        if (bytes->size() < options_.chunk_bytes) break;  // reached the end for now
        result.behind = result.bytes_read >= options_.max_bytes_per_poll;
    }
    result.lines = total_lines_ - lines_before;
    return result;
}

Result<PollResult> LogFollower::read_to_end() {
    PollResult total;
    for (bool more = true; more;) {
        Result<PollResult> polled = poll();
        if (!polled.ok()) return polled;
        total.file_exists = polled->file_exists;
        total.restarted |= polled->restarted;
        total.bytes_read += polled->bytes_read;
        total.reconnects += polled->reconnects;
        total.lines += polled->lines;
        more = polled->behind;
    }
    const std::int64_t lines_before = total_lines_;
    finish();
    total.lines += total_lines_ - lines_before;
    return total;
}

void LogFollower::finish() {
    if (partial_.empty()) return;
    stream_->feed(partial_);
    stream_->finish();
    offset_ += partial_.size();
    partial_.clear();
}

}  // namespace slipway::remote
