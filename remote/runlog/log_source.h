// Where a followed log's bytes come from: the seam under LogFollower. A file on this machine (the app's
// local runs and opened logs) or one on the login node over a Session (SFTP reads with offsets); the
// follower's rules (complete lines, truncation, resuming from an offset) are then written once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "contract/status.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

class LogSource {
public:
    virtual ~LogSource() = default;

    // Up to max_bytes from byte `offset` (fewer at the end, empty at or past it). kNotFound while the file
    // does not exist (a pending job's log); kUnavailable when a connection was lost (reconnect() and read
    // again); any other error names the file.
    [[nodiscard]] virtual Result<std::string> read(std::uint64_t offset, std::size_t max_bytes) = 0;
    // The file's size now; nullopt when it does not exist. Errors as read().
    [[nodiscard]] virtual Result<std::optional<std::uint64_t>> size() = 0;
    // Re-establishes a lost connection; a local file has none to lose.
    [[nodiscard]] virtual Status reconnect() = 0;
    virtual const std::string& path() const = 0;
};

// A file on this machine, opened anew for every read: a log that is replaced (a restarted job) is read
// as the new file.
class LocalFileSource final : public LogSource {
public:
    explicit LocalFileSource(std::string path) : path_(std::move(path)) {}

    Result<std::string> read(std::uint64_t offset, std::size_t max_bytes) override;
    Result<std::optional<std::uint64_t>> size() override;
    Status reconnect() override { return Status::Ok(); }
    const std::string& path() const override { return path_; }

private:
    std::string path_;
};

// A file on the other end of a Session (not owned; it must outlive the source).
class SessionFileSource final : public LogSource {
public:
    SessionFileSource(Session& session, std::string path) : session_(session), path_(std::move(path)) {}

    Result<std::string> read(std::uint64_t offset, std::size_t max_bytes) override {
        return session_.read_range(path_, offset, max_bytes);
    }
    Result<std::optional<std::uint64_t>> size() override;
    Status reconnect() override { return session_.reconnect(); }
    const std::string& path() const override { return path_; }

private:
    Session& session_;
    std::string path_;
};

}  // namespace slipway::remote
