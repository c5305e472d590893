// RemoteLogFollower (see log_follower.h). The invariant: offset_ is the end of the last delivered line,
// and partial_ holds exactly the bytes [offset_, offset_ + partial_.size()) of the file, so every read
// continues at offset_ + partial_.size() and a retry after a failure repeats nothing.
#include "remote/runlog/log_follower.h"

#include <utility>

namespace slipway::remote {

RemoteLogFollower::RemoteLogFollower(Session& session, std::string path, Sink sink, std::uint64_t offset,
                                     FollowerOptions options)
    : session_(session), path_(std::move(path)), sink_(std::move(sink)), options_(options), offset_(offset) {
    if (options_.chunk_bytes == 0) options_.chunk_bytes = 1;
    new_stream();
}

void RemoteLogFollower::new_stream() {
    stream_ = std::make_unique<MllogStream>(
        [this](MllogStreamItem&& item) {
            ++total_lines_;
            sink_(std::move(item));
        },
        options_.max_line_bytes);
}

void RemoteLogFollower::restart() {
    offset_ = 0;
    partial_.clear();
    new_stream();  // line numbers start again with the new file
}

Result<std::string> RemoteLogFollower::read_with_reconnect(std::uint64_t position, PollResult& result) {
    for (int attempt = 0;; ++attempt) {
        Result<std::string> bytes = session_.read_range(path_, position, options_.chunk_bytes);
        if (bytes.ok() || bytes.code() != StatusCode::kUnavailable || attempt >= options_.reconnect_attempts)
            return bytes;
        ++result.reconnects;
        if (Status s = session_.reconnect(); !s.ok() && attempt + 1 >= options_.reconnect_attempts) {
            return Status::Error(s.code(), "following " + path_ + ": " + s.message());
        }
    }
}

Result<RemoteStat> RemoteLogFollower::stat_with_reconnect(PollResult& result) {
    for (int attempt = 0;; ++attempt) {
        Result<RemoteStat> st = session_.stat(path_);
        if (st.ok() || st.code() != StatusCode::kUnavailable || attempt >= options_.reconnect_attempts)
            return st;
        ++result.reconnects;
        if (Status s = session_.reconnect(); !s.ok() && attempt + 1 >= options_.reconnect_attempts) {
            return Status::Error(s.code(), "following " + path_ + ": " + s.message());
        }
    }
}

void RemoteLogFollower::deliver(std::string_view complete_lines) {
    stream_->feed(complete_lines);
    offset_ += complete_lines.size();
}

Result<PollResult> RemoteLogFollower::poll() {
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
            return Status::Error(bytes.code(), "following " + path_ + ": " + bytes.error());
        }
        result.file_exists = true;
        if (bytes->empty()) {
            // Nothing new, or the file is now shorter than what we have read: truncated or replaced.
            Result<RemoteStat> st = stat_with_reconnect(result);
            if (!st.ok()) return Status::Error(st.code(), "following " + path_ + ": " + st.error());
            if (st->exists && st->size < position && !result.restarted) {
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
    }
    result.lines = total_lines_ - lines_before;
    return result;
}

void RemoteLogFollower::finish() {
    if (partial_.empty()) return;
    stream_->feed(partial_);
    stream_->finish();
    offset_ += partial_.size();
    partial_.clear();
}

}  // namespace slipway::remote
