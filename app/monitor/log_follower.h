// Follows a growing log file from a byte offset: each poll reads only the bytes appended since the last
// one and returns the complete lines they finish. offset() is always at a line start, so a follower made
// later with that offset (after a restart or a dropped connection) goes on without losing or repeating a
// line. A file that shrank below the offset was rewritten: the poll says reset and starts over at 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "contract/mllog_stream.h"
#include "contract/status.h"

namespace slipway::app {

struct FollowChunk {
    bool reset = false;    // the file was replaced or truncated: drop what came from it before
    bool missing = false;  // the file does not exist (yet)
    std::vector<MllogStreamItem> items;
    uint64_t offset = 0;  // bytes of the file consumed, through the last complete line
};

class LogFollower {
public:
    static constexpr size_t kDefaultPollBytes = size_t{16} << 20;

    explicit LogFollower(std::string path, uint64_t offset = 0);
    LogFollower(const LogFollower&) = delete;  // the stream's sink points at this object
    LogFollower& operator=(const LogFollower&) = delete;

    // Reads at most max_bytes of what was appended. Errors other than "does not exist" name the file.
    Result<FollowChunk> poll(size_t max_bytes = kDefaultPollBytes);
    // Also emits a last line without '\n' (the writer has ended). The offset then includes it.
    Result<FollowChunk> finish();

    const std::string& path() const { return path_; }
    uint64_t offset() const { return read_ - stream_.pending_bytes(); }
    // True when the last poll stopped at max_bytes: more is waiting.
    bool behind() const { return behind_; }

private:
    std::string path_;
    uint64_t read_;  // bytes read from the file and fed to the stream (pending ones included)
    MllogStream stream_;
    std::vector<MllogStreamItem>* sink_target_ = nullptr;
    bool behind_ = false;
};

}  // namespace slipway::app
