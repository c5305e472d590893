// LibsshSession's SFTP calls: atomic upload (temporary name, mode, rename), download, stat, read_range,
// folder listings, mkdir -p and remove, over one SFTP channel opened on first use.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "contract/file_system.h"
#include "remote/ssh/libssh_session_impl.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

constexpr std::size_t kChunk = 32768;  // libssh sends at most one SFTP packet of about this size per call

std::string sftp_error_name(int code) {
    switch (code) {
        case SSH_FX_OK:
            return "ok";
        case SSH_FX_EOF:
            return "end of file";
        case SSH_FX_NO_SUCH_FILE:
            return "no such file";
        case SSH_FX_PERMISSION_DENIED:
            return "permission denied";
        case SSH_FX_FAILURE:
            return "failure";
        case SSH_FX_BAD_MESSAGE:
            return "bad message";
        case SSH_FX_NO_CONNECTION:
            return "no connection";
        case SSH_FX_CONNECTION_LOST:
            return "connection lost";
        case SSH_FX_OP_UNSUPPORTED:
            return "operation unsupported";
        case SSH_FX_FILE_ALREADY_EXISTS:
            return "file already exists";
        case SSH_FX_NO_SUCH_PATH:
            return "no such path";
        default:
            return "SFTP error " + std::to_string(code);
    }
}

struct FileGuard {
    sftp_file file;
    ~FileGuard() {
        if (file != nullptr) sftp_close(file);
    }
};

std::string parent_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    if (slash == std::string::npos) return "";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// Whether `path` is a folder (links followed); nullopt when it cannot be stat'ed (sftp_get_error says why).
std::optional<bool> stat_is_dir(sftp_session sftp, const std::string& path) {
    sftp_attributes attributes = sftp_stat(sftp, path.c_str());
    if (attributes == nullptr) return std::nullopt;
    const bool is_dir = attributes->type == SSH_FILEXFER_TYPE_DIRECTORY;
    sftp_attributes_free(attributes);
    return is_dir;
}

std::string random_suffix() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(rng()));
    return text;
}

}  // namespace

std::string sftp_path(const std::string& remote) {
    if (remote == "~") return ".";
    if (remote.rfind("~/", 0) == 0) return remote.substr(2).empty() ? "." : remote.substr(2);
    return remote;
}

Result<sftp_session> LibsshSession::sftp_locked() {
    if (Status s = require_connection("sftp"); !s) return s;
    if (sftp_ != nullptr) return sftp_;
    sftp_session sftp = sftp_new(connection_->raw());
    if (sftp == nullptr) return failure("cannot open an SFTP channel");
    if (sftp_init(sftp) != SSH_OK) {
        const int code = sftp_get_error(sftp);
        sftp_free(sftp);
        Status s = failure("cannot start SFTP (" + sftp_error_name(code) + ")");
        return s;
    }
    sftp_ = sftp;
    return sftp_;
}

Status LibsshSession::sftp_failure(const std::string& what) const {
    const int code = sftp_ != nullptr ? sftp_get_error(sftp_) : SSH_FX_NO_CONNECTION;
    if (!connected_locked() || code == SSH_FX_CONNECTION_LOST || code == SSH_FX_NO_CONNECTION) {
        return Status::Error(StatusCode::kUnavailable, what + " on " + describe() + ": connection lost");
    }
    const StatusCode status_code = (code == SSH_FX_NO_SUCH_FILE || code == SSH_FX_NO_SUCH_PATH)
                                       ? StatusCode::kNotFound
                                       : StatusCode::kError;
    return Status::Error(status_code, what + " on " + describe() + ": " + sftp_error_name(code));
}

Status LibsshSession::upload_stream_locked(
    const std::string& remote, std::uint32_t mode,
    const std::function<Result<std::size_t>(char*, std::size_t)>& read_chunk) {
    auto sftp = sftp_locked();
    if (!sftp) return sftp.status();
    const std::string path = sftp_path(remote);
    const std::string folder = parent_of(path);
    const std::string base = folder.empty() ? path : path.substr(folder.size() + (folder == "/" ? 0 : 1));
    const std::string temporary = (folder.empty() ? "" : (folder == "/" ? "/" : folder + "/")) + "." + base +
                                  ".slipway-" + random_suffix();

    sftp_file file = sftp_open(*sftp, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode & 07777);
    if (file == nullptr) return sftp_failure("upload: cannot create " + temporary);
    {
        FileGuard guard{file};
        std::string buffer(kChunk, '\0');
        for (;;) {
            auto n = read_chunk(buffer.data(), buffer.size());
            if (!n) {
                guard.file = nullptr;
                sftp_close(file);
                sftp_unlink(*sftp, temporary.c_str());
                return n.status();
            }
            if (*n == 0) break;
            std::size_t written = 0;
            while (written < *n) {
                const ssize_t w = sftp_write(file, buffer.data() + written, *n - written);
                if (w <= 0) {
                    Status s = sftp_failure("upload: writing " + temporary);
                    guard.file = nullptr;
                    sftp_close(file);
                    if (connected_locked()) sftp_unlink(*sftp, temporary.c_str());
                    return s;
                }
                written += static_cast<std::size_t>(w);
            }
        }
    }
    // The server's umask may have cut bits from the mode given at creation.
    if (sftp_chmod(*sftp, temporary.c_str(), mode & 07777) != SSH_OK) {
        Status s = sftp_failure("upload: setting mode of " + temporary);
        sftp_unlink(*sftp, temporary.c_str());
        return s;
    }
    if (sftp_rename(*sftp, temporary.c_str(), path.c_str()) == SSH_OK) return Status::Ok();
    // SFTP v3 (OpenSSH) refuses to rename over an existing file, and libssh 0.10 cannot send the
    // posix-rename@openssh.com extension: replace it with rename(2) through `mv -f`, still atomic.
    Status failed = sftp_failure("upload: renaming " + temporary + " to " + path);
    if (const std::optional<bool> is_dir = stat_is_dir(*sftp, path)) {
        auto command = shell_command({"mv", "-f", "--", temporary, path});
        if (!*is_dir && command) {
            auto moved = exec_locked(*command, std::chrono::seconds(60));
            if (moved && moved->exit_status == 0) return Status::Ok();
            if (moved)
                failed = Status::Error("upload: replacing " + path + " on " + describe() + ": " + moved->err);
            else
                failed = moved.status();
        }
    }
    if (connected_locked()) sftp_unlink(*sftp, temporary.c_str());
    return failed;
}

Status LibsshSession::upload_bytes(const std::string& bytes, const std::string& remote, std::uint32_t mode) {
    std::lock_guard<std::mutex> lock(*mutex_);
    std::size_t offset = 0;
    return upload_stream_locked(remote, mode, [&](char* out, std::size_t size) -> Result<std::size_t> {
        const std::size_t n = std::min(size, bytes.size() - offset);
        std::copy(bytes.data() + offset, bytes.data() + offset + n, out);
        offset += n;
        return n;
    });
}

Status LibsshSession::upload_file(const std::string& local, const std::string& remote, std::uint32_t mode) {
    std::ifstream in(local, std::ios::binary);
    if (!in) return Status::Error(StatusCode::kNotFound, "upload: cannot read local file " + local);
    std::lock_guard<std::mutex> lock(*mutex_);
    return upload_stream_locked(remote, mode, [&](char* out, std::size_t size) -> Result<std::size_t> {
        in.read(out, static_cast<std::streamsize>(size));
        if (in.bad()) return Result<std::size_t>::Error("upload: reading local file " + local + " failed");
        return static_cast<std::size_t>(in.gcount());
    });
}

Status LibsshSession::download_file(const std::string& remote, const std::string& local) {
    std::lock_guard<std::mutex> lock(*mutex_);
    auto sftp = sftp_locked();
    if (!sftp) return sftp.status();
    const std::string path = sftp_path(remote);
    sftp_file file = sftp_open(*sftp, path.c_str(), O_RDONLY, 0);
    if (file == nullptr) return sftp_failure("download: cannot open " + path);
    FileGuard guard{file};
    // Written beside the destination, fsynced and renamed: a failed download leaves no partial file.
    Result<AtomicFile> out = AtomicFile::create(local);
    if (!out.ok()) return Status::Error("download: " + out.error());
    std::string buffer(kChunk, '\0');
    for (;;) {
        const ssize_t n = sftp_read(file, buffer.data(), buffer.size());
        if (n == 0) break;
        if (n < 0) return sftp_failure("download: reading " + path);  // ~AtomicFile removes the temporary
        if (Status s = out->append(std::string_view(buffer.data(), static_cast<size_t>(n))); !s.ok())
            return Status::Error("download: " + s.message());
    }
    if (Status s = out->commit(); !s.ok()) return Status::Error("download: " + s.message());
    return Status::Ok();
}

Result<std::string> LibsshSession::read_range(const std::string& remote, std::uint64_t offset,
                                              std::size_t max_bytes) {
    std::lock_guard<std::mutex> lock(*mutex_);
    auto sftp = sftp_locked();
    if (!sftp) return sftp.status();
    const std::string path = sftp_path(remote);
    sftp_file file = sftp_open(*sftp, path.c_str(), O_RDONLY, 0);
    if (file == nullptr) return sftp_failure("read " + path);
    FileGuard guard{file};
    if (sftp_seek64(file, offset) != SSH_OK) return sftp_failure("read " + path + ": seek");
    std::string bytes;
    while (bytes.size() < max_bytes) {
        const std::size_t want = std::min(kChunk, max_bytes - bytes.size());
        const std::size_t have = bytes.size();
        bytes.resize(have + want);
        const ssize_t n = sftp_read(file, bytes.data() + have, want);
        if (n < 0) return sftp_failure("read " + path);
        bytes.resize(have + static_cast<std::size_t>(n));
        if (n == 0) break;
    }
    return bytes;
}

Result<RemoteStat> LibsshSession::stat(const std::string& remote) {
    std::lock_guard<std::mutex> lock(*mutex_);
    auto sftp = sftp_locked();
    if (!sftp) return sftp.status();
    const std::string path = sftp_path(remote);
    sftp_attributes attributes = sftp_stat(*sftp, path.c_str());
    if (attributes == nullptr) {
        Status s = sftp_failure("stat " + path);
        if (s.code() == StatusCode::kNotFound) return RemoteStat{};
        return s;
    }
    RemoteStat result{true, attributes->size, static_cast<std::int64_t>(attributes->mtime),
                      attributes->permissions & 07777, attributes->type == SSH_FILEXFER_TYPE_DIRECTORY};
    sftp_attributes_free(attributes);
    return result;
}

Result<std::vector<RemoteDirEntry>> LibsshSession::list_directory(const std::string& remote) {
    std::lock_guard<std::mutex> lock(*mutex_);
    auto sftp = sftp_locked();
    if (!sftp) return sftp.status();
    const std::string path = sftp_path(remote);
    sftp_dir dir = sftp_opendir(*sftp, path.c_str());
    if (dir == nullptr) {
        Status failed = sftp_failure("list " + path);
        // OpenSSH answers "no such file" for a path that is a file (ENOTDIR): say what it is.
        if (stat_is_dir(*sftp, path) == false)
            return Status::Error("list " + path + " on " + describe() + ": not a folder");
        return failed;
    }
    std::vector<RemoteDirEntry> entries;
    while (sftp_attributes attributes = sftp_readdir(*sftp, dir)) {
        const std::string name = attributes->name != nullptr ? attributes->name : "";
        // A name with '/' would be a path: a server that sends one is not trusted with it.
        if (name != "." && name != ".." && !name.empty() && name.find('/') == std::string::npos) {
            RemoteDirEntry entry;
            entry.name = name;
            switch (attributes->type) {  // from lstat on the server: links are not followed
                case SSH_FILEXFER_TYPE_REGULAR:
                    entry.type = RemoteEntryType::kFile;
                    break;
                case SSH_FILEXFER_TYPE_DIRECTORY:
                    entry.type = RemoteEntryType::kDirectory;
                    break;
                case SSH_FILEXFER_TYPE_SYMLINK:
                    entry.type = RemoteEntryType::kSymlink;
                    break;
                default:
                    entry.type = RemoteEntryType::kOther;
                    break;
            }
            entry.size = attributes->size;
            entry.mode = attributes->permissions & 07777;
            entry.mtime = static_cast<std::int64_t>(attributes->mtime);
            entries.push_back(std::move(entry));
        }
        sftp_attributes_free(attributes);
    }
    // NULL from sftp_readdir is the end of the listing or an error; only the end sets eof.
    const bool complete = sftp_dir_eof(dir) != 0;
    Status failed = complete ? Status::Ok() : sftp_failure("list " + path);
    sftp_closedir(dir);
    if (!complete) return failed;
    std::sort(entries.begin(), entries.end(),
              [](const RemoteDirEntry& a, const RemoteDirEntry& b) { return a.name < b.name; });
    return entries;
}

Status LibsshSession::mkdir_p(const std::string& remote, std::uint32_t mode) {
    std::lock_guard<std::mutex> lock(*mutex_);
    auto sftp = sftp_locked();
    if (!sftp) return sftp.status();
    const std::string path = sftp_path(remote);
    for (std::size_t end = 0; end != std::string::npos;) {
        end = path.find('/', end + 1);
        const std::string prefix = path.substr(0, end);
        if (prefix.empty() || prefix == "." || (end != std::string::npos && path[end - 1] == '/')) continue;
        if (const std::optional<bool> is_dir = stat_is_dir(*sftp, prefix)) {
            if (!*is_dir)
                return Status::Error("mkdir -p " + path + " on " + describe() + ": " + prefix + " is a file");
            continue;
        }
        if (sftp_get_error(*sftp) != SSH_FX_NO_SUCH_FILE)
            return sftp_failure("mkdir -p " + path + ": stat " + prefix);
        if (sftp_mkdir(*sftp, prefix.c_str(), mode & 07777) != SSH_OK &&
            sftp_get_error(*sftp) != SSH_FX_FILE_ALREADY_EXISTS) {
            // Another client may have created it between the stat and the mkdir.
            if (!stat_is_dir(*sftp, prefix).value_or(false))
                return sftp_failure("mkdir -p " + path + ": mkdir " + prefix);
        }
    }
    return Status::Ok();
}

Status LibsshSession::remove(const std::string& remote) {
    std::lock_guard<std::mutex> lock(*mutex_);
    auto sftp = sftp_locked();
    if (!sftp) return sftp.status();
    const std::string path = sftp_path(remote);
    sftp_attributes attributes = sftp_lstat(*sftp, path.c_str());
    if (attributes == nullptr) {
        Status s = sftp_failure("remove " + path);
        return s.code() == StatusCode::kNotFound ? Status::Ok() : s;
    }
    const bool is_dir = attributes->type == SSH_FILEXFER_TYPE_DIRECTORY;
    sftp_attributes_free(attributes);
    const int rc = is_dir ? sftp_rmdir(*sftp, path.c_str()) : sftp_unlink(*sftp, path.c_str());
    if (rc != SSH_OK) return sftp_failure("remove " + path);
    return Status::Ok();
}

}  // namespace slipway::remote
