// LocalFileSource and SessionFileSource (see log_source.h).
#include "remote/runlog/log_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace slipway::remote {
namespace {

// Closes the descriptor on every path out.
struct Descriptor {
    int fd;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

Status file_error(const std::string& what, const std::string& path, int error) {
    return Status::Error(error == ENOENT ? StatusCode::kNotFound : StatusCode::kError,
                         "cannot " + what + " log file '" + path + "': " + std::strerror(error));
}

}  // namespace

Result<std::string> LocalFileSource::read(std::uint64_t offset, std::size_t max_bytes) {
    const Descriptor file{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0) return file_error("open", path_, errno);
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) return file_error("stat", path_, errno);
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (offset >= size) return std::string();
    std::string bytes(static_cast<std::size_t>(std::min<std::uint64_t>(size - offset, max_bytes)), '\0');
    std::size_t got = 0;
    while (got < bytes.size()) {
        const ssize_t n =
            ::pread(file.fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(offset + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return file_error("read", path_, errno);
        if (n == 0) break;  // shrank while reading
        got += static_cast<std::size_t>(n);
    }
    bytes.resize(got);
    return bytes;
}

Result<std::optional<std::uint64_t>> LocalFileSource::size() {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) {
        if (errno == ENOENT) return std::optional<std::uint64_t>();
        return file_error("stat", path_, errno);
    }
    return std::optional<std::uint64_t>(static_cast<std::uint64_t>(st.st_size));
}

Result<std::optional<std::uint64_t>> SessionFileSource::size() {
    Result<RemoteStat> st = session_.stat(path_);
    if (!st.ok()) return st.status();
    if (!st->exists) return std::optional<std::uint64_t>();
    return std::optional<std::uint64_t>(st->size);
}

}  // namespace slipway::remote
