// LogFollower: incremental reads of a growing file into MLLOG stream items.
#include "monitor/log_follower.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace slipway::app {

LogFollower::LogFollower(std::string path, uint64_t offset)
    : path_(std::move(path)), read_(offset), stream_([this](MllogStreamItem&& item) {
          if (sink_target_ != nullptr) sink_target_->push_back(std::move(item));
      }) {}

Result<FollowChunk> LogFollower::poll(size_t max_bytes) {
    FollowChunk chunk;
    behind_ = false;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path_.c_str(), "rb"), &std::fclose);
    if (!file) {
        if (errno == ENOENT) {
            chunk.missing = true;
            chunk.offset = offset();
            return chunk;
        }
        return Result<FollowChunk>::Error("cannot open log file '" + path_ + "': " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(::fileno(file.get()), &st) != 0) {
        return Result<FollowChunk>::Error("cannot stat log file '" + path_ + "': " + std::strerror(errno));
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size < offset() || size < read_) {
        // Rewritten (a restarted job truncates its log): everything from it so far is stale.
        chunk.reset = true;
        stream_ = MllogStream([this](MllogStreamItem&& item) {
            if (sink_target_ != nullptr) sink_target_->push_back(std::move(item));
        });
        read_ = 0;
    }
    if (size > read_ && std::fseek(file.get(), static_cast<long>(read_), SEEK_SET) == 0) {
        const size_t want = static_cast<size_t>(std::min<uint64_t>(size - read_, max_bytes));
        std::string buffer(want, '\0');
        const size_t got = std::fread(buffer.data(), 1, want, file.get());
        if (got == 0 && std::ferror(file.get())) {
            return Result<FollowChunk>::Error("cannot read log file '" + path_ +
                                              "': " + std::strerror(errno));
        }
        buffer.resize(got);
        sink_target_ = &chunk.items;
        stream_.feed(buffer);
        sink_target_ = nullptr;
        read_ += got;
        behind_ = read_ < size;
    }
    chunk.offset = offset();
    return chunk;
}

Result<FollowChunk> LogFollower::finish() {
    Result<FollowChunk> chunk = poll(static_cast<size_t>(-1) / 2);
    if (!chunk.ok()) return chunk;
    sink_target_ = &chunk->items;
    stream_.finish();
    sink_target_ = nullptr;
    chunk->offset = offset();
    return chunk;
}

}  // namespace slipway::app
