// The POSIX FileSystem, the process default, AtomicFile and write_file_atomically (file_system.h).
#include "contract/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

namespace slipway {
namespace {

namespace fs = std::filesystem;

Status errno_error(const std::string& path, const char* operation, int error) {
    return Status::Error(path + ": " + operation + ": " + std::strerror(error));
}

// Buffers small appends (the token cache appends a document at a time) into 1 MiB writes.
class PosixWritableFile final : public WritableFile {
public:
    PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {
        buffer_.reserve(kBuffer);
    }
    ~PosixWritableFile() override {
        if (fd_ >= 0) ::close(fd_);
    }

    Status append(std::string_view bytes) override {
        if (fd_ < 0) return Status::Error(path_ + ": append after close");
        if (buffer_.size() + bytes.size() <= kBuffer) {
            buffer_.append(bytes);
            return Status::Ok();
        }
        if (Status s = flush(); !s.ok()) return s;
        if (bytes.size() < kBuffer) {
            buffer_.append(bytes);
            return Status::Ok();
        }
        return write_all(bytes);
    }

    Status sync() override {
        if (Status s = flush(); !s.ok()) return s;
        if (::fsync(fd_) != 0) return errno_error(path_, "fsync", errno);
        return Status::Ok();
    }

    Status close() override {
        Status flushed = flush();
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0 && flushed.ok()) return errno_error(path_, "close", errno);
        return flushed;
    }

    Status flush() override {
        if (fd_ < 0) return Status::Error(path_ + ": already closed");
        const std::string pending = std::move(buffer_);
        buffer_.clear();
        buffer_.reserve(kBuffer);
        return write_all(pending);
    }

private:
    static constexpr size_t kBuffer = 1 << 20;

    Status write_all(std::string_view bytes) {
        while (!bytes.empty()) {
            const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
            if (n < 0) {
                if (errno == EINTR) continue;
                return errno_error(path_, "write", errno);
            }
            // Some FUSE filesystems answer 0 to a write they cannot take: an error, not a loop.
            if (n == 0) return errno_error(path_, "write", EIO);
            bytes.remove_prefix(static_cast<size_t>(n));
        }
        return Status::Ok();
    }

    std::string path_;
    int fd_;
    std::string buffer_;
};

class PosixFileSystem final : public FileSystem {
public:
    Result<std::unique_ptr<WritableFile>> create_file(const std::string& path, unsigned mode) override {
        const int fd =
            ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
        if (fd < 0) return errno_error(path, "cannot create", errno);
        return std::unique_ptr<WritableFile>(std::make_unique<PosixWritableFile>(path, fd));
    }

    Result<std::unique_ptr<WritableFile>> open_for_append(const std::string& path, unsigned mode) override {
        const int fd =
            ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, static_cast<mode_t>(mode));
        if (fd < 0) return errno_error(path, "cannot open for appending", errno);
        return std::unique_ptr<WritableFile>(std::make_unique<PosixWritableFile>(path, fd));
    }

    Status set_mode(const std::string& path, unsigned mode) override {
        if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) return errno_error(path, "chmod", errno);
        return Status::Ok();
    }

    Status rename(const std::string& from, const std::string& to) override {
        if (std::rename(from.c_str(), to.c_str()) != 0)
            return Status::Error(to + ": cannot rename " + from + " to it: " + std::strerror(errno));
        return Status::Ok();
    }

    Status sync_dir(const std::string& dir) override {
        const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) return errno_error(dir, "cannot open the folder to fsync it", errno);
        // EINVAL: this filesystem cannot fsync a folder (some FUSE and network ones); nothing more to do.
        const bool synced = ::fsync(fd) == 0 || errno == EINVAL;
        const int error = errno;
        ::close(fd);
        if (!synced) return errno_error(dir, "fsync of the folder", error);
        return Status::Ok();
    }

    Status remove_all(const std::string& path) override {
        std::error_code ec;
        fs::remove_all(path, ec);
        if (ec) return Status::Error(path + ": cannot remove: " + ec.message());
        return Status::Ok();
    }

    Status create_dirs(const std::string& path) override {
        std::error_code ec;
        fs::create_directories(path, ec);
        if (ec) return Status::Error(path + ": cannot create the folder: " + ec.message());
        return Status::Ok();
    }
};

std::atomic<FileSystem*> installed{nullptr};

// Unique within the process; the pid keeps two processes (two ranks on a shared folder) apart, and a random
// start keeps a temporary that a crash left from colliding with the next run's (in a container the engine
// gets the same small pid every time).
std::string temporary_name(const std::string& path) {
    static std::atomic<uint64_t> counter{(uint64_t{std::random_device{}()} << 32) | std::random_device{}()};
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(counter++));
    return path + ".tmp." + std::to_string(::getpid()) + "." + suffix;
}

}  // namespace

FileSystem& posix_file_system() {
    static PosixFileSystem posix;
    return posix;
}

FileSystem& default_file_system() {
    FileSystem* fs = installed.load();
    return fs ? *fs : posix_file_system();
}

void set_default_file_system(FileSystem* fs) {
    installed.store(fs);
}

std::string parent_folder(const std::string& path) {
    const fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

Result<std::string> read_file(const std::string& path) {
    // read(2) checked at every call: an iostream read error can end a copy early and still look fine.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_error(path, "cannot read", errno);
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        return errno_error(path, "cannot read", error);
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        return Result<std::string>::Error(path + ": not a regular file");
    }
    std::string text;
    text.reserve(static_cast<size_t>(info.st_size));
    char chunk[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int error = errno;
            ::close(fd);
            return errno_error(path, "read failed", error);
        }
        if (n == 0) break;
        text.append(chunk, static_cast<size_t>(n));
    }
    ::close(fd);
    return text;
}

Status copy_file_atomically(const std::string& from, const std::string& to, FileSystem& fs) {
    Result<std::string> content = read_file(from);
    if (!content.ok()) return Status::Error(to + ": cannot copy (" + content.error() + ")");
    return write_file_atomically(to, *content, fs);
}

Result<AtomicFile> AtomicFile::create(const std::string& path, const AtomicWriteOptions& options,
                                      FileSystem& fs) {
    std::optional<unsigned> mode = options.mode;
    if (struct stat replaced{}; !mode && ::lstat(path.c_str(), &replaced) == 0 && S_ISREG(replaced.st_mode))
        mode = replaced.st_mode & 07777;
    std::string temporary = temporary_name(path);
    Result<std::unique_ptr<WritableFile>> file = fs.create_file(temporary, mode.value_or(0666));
    if (!file.ok()) return Status::Error(path + ": not written (" + file.error() + ")");
    AtomicFile atomic(&fs, path, std::move(temporary), std::move(*file));
    if (mode) {
        if (Status s = fs.set_mode(atomic.temporary_, *mode); !s.ok()) return atomic.fail(s);
    }
    return atomic;
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : fs_(other.fs_),
      path_(std::move(other.path_)),
      temporary_(std::move(other.temporary_)),
      file_(std::move(other.file_)),
      bytes_written_(other.bytes_written_),
      done_(other.done_) {
    other.done_ = true;
}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
    if (this != &other) {
        if (!done_) (void)fail(Status::Ok());
        fs_ = other.fs_;
        path_ = std::move(other.path_);
        temporary_ = std::move(other.temporary_);
        file_ = std::move(other.file_);
        bytes_written_ = other.bytes_written_;
        done_ = other.done_;
        other.done_ = true;
    }
    return *this;
}

AtomicFile::~AtomicFile() {
    if (!done_) (void)fail(Status::Ok());
}

Status AtomicFile::fail(const Status& why) {
    file_.reset();  // closes; the result no longer matters
    (void)fs_->remove_all(temporary_);
    done_ = true;
    if (why.ok()) return why;
    return Status::Error(path_ + ": not written (" + why.message() + ")");
}

Status AtomicFile::append(std::string_view bytes) {
    if (done_) return Status::Error(path_ + ": append after commit or failure");
    if (Status s = file_->append(bytes); !s.ok()) return fail(s);
    bytes_written_ += bytes.size();
    return Status::Ok();
}

Status AtomicFile::commit() {
    if (done_) return Status::Error(path_ + ": commit after commit or failure");
    if (Status s = file_->sync(); !s.ok()) return fail(s);
    if (Status s = file_->close(); !s.ok()) return fail(s);
    file_.reset();
    if (Status s = fs_->rename(temporary_, path_); !s.ok()) return fail(s);
    done_ = true;
    // The new name is in place; without this fsync a crash could still bring the old file back.
    if (Status s = fs_->sync_dir(parent_folder(path_)); !s.ok())
        return Status::Error(path_ + ": written, but its folder could not be synced (" + s.message() + ")");
    return Status::Ok();
}

Status write_file_atomically(const std::string& path, std::string_view bytes, FileSystem& fs) {
    return write_file_atomically(path, bytes, AtomicWriteOptions{}, fs);
}

Status write_file_atomically(const std::string& path, std::string_view bytes,
                             const AtomicWriteOptions& options, FileSystem& fs) {
    Result<AtomicFile> file = AtomicFile::create(path, options, fs);
    if (!file.ok()) return file.status();
    if (Status s = file->append(bytes); !s.ok()) return s;
    return file->commit();
}

}  // namespace slipway
