// The filesystem seam (leveldb's Env idea): every file Slipway writes goes through a FileSystem, so a test
// can make the disk fill up, an fsync or a rename fail, or a crash drop what was never synced, without root
// and without a real full disk. write_file_atomically and AtomicFile are the one way to write a file: a
// temporary name in the same folder, fsync, a checked close, rename, fsync of the folder; on any failure
// the temporary is removed, the old file is left as it was, and the error names the path and the cause.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "contract/status.h"

namespace slipway {

// A file open for writing. Destroying it without close() closes it and ignores the result (the writer has
// already failed for another reason).
class WritableFile {
public:
    virtual ~WritableFile() = default;
    [[nodiscard]] virtual Status append(std::string_view bytes) = 0;
    // Hands what append() buffered to the kernel: readers (`tail -f`) see it; not yet durable.
    [[nodiscard]] virtual Status flush() = 0;
    [[nodiscard]] virtual Status sync() = 0;   // fsync: the bytes are on the disk
    [[nodiscard]] virtual Status close() = 0;  // checked: a failed close may mean lost bytes (NFS, quota)
};

class FileSystem {
public:
    virtual ~FileSystem() = default;
    // Creates a new file (it must not exist) with permission bits `mode`, less the umask.
    virtual Result<std::unique_ptr<WritableFile>> create_file(const std::string& path, unsigned mode) = 0;
    // Opens a file for appending (a log), creating it with `mode` less the umask when it is missing.
    virtual Result<std::unique_ptr<WritableFile>> open_for_append(const std::string& path, unsigned mode) = 0;
    // Sets exact permission bits (no umask), e.g. 0600 for a file only its owner may read.
    [[nodiscard]] virtual Status set_mode(const std::string& path, unsigned mode) = 0;
    // rename(2): replaces `to` atomically (files, or a folder onto a missing or empty one).
    [[nodiscard]] virtual Status rename(const std::string& from, const std::string& to) = 0;
    // fsync of a folder: makes the names created, renamed or removed in it durable.
    [[nodiscard]] virtual Status sync_dir(const std::string& dir) = 0;
    // Removes a file or a whole folder; a missing path is not an error.
    [[nodiscard]] virtual Status remove_all(const std::string& path) = 0;
    [[nodiscard]] virtual Status create_dirs(const std::string& path) = 0;
};

// The process's file system: POSIX, unless the engine installed a FaultyFileSystem from SLIPWAY_FS_FAULT
// (faulty_file_system.h) at start-up.
FileSystem& default_file_system();
// Replaces the default; the caller keeps `fs` alive while it is installed. nullptr restores POSIX.
void set_default_file_system(FileSystem* fs);
// The real one, whatever the default is.
FileSystem& posix_file_system();

struct AtomicWriteOptions {
    // Exact permission bits of the new file. Unset: those of the file it replaces (a 0600 file stays
    // private), or 0666 less the umask for a new one. A symbolic link at `path` is replaced, not followed.
    std::optional<unsigned> mode;
};

// A file written under a temporary name in its folder and put in place by commit(). Destroying it without
// a successful commit removes the temporary; the file at `path` is then untouched.
class AtomicFile {
public:
    [[nodiscard]] static Result<AtomicFile> create(const std::string& path,
                                                   const AtomicWriteOptions& options = {},
                                                   FileSystem& fs = default_file_system());
    AtomicFile(AtomicFile&&) noexcept;
    AtomicFile& operator=(AtomicFile&&) noexcept;
    ~AtomicFile();

    [[nodiscard]] Status append(std::string_view bytes);
    // fsync, close, rename over `path`, fsync of the folder. The first error wins, naming the path.
    [[nodiscard]] Status commit();
    const std::string& path() const { return path_; }
    const std::string& temporary_path() const { return temporary_; }
    uint64_t bytes_written() const { return bytes_written_; }

private:
    AtomicFile(FileSystem* fs, std::string path, std::string temporary, std::unique_ptr<WritableFile> file)
        : fs_(fs), path_(std::move(path)), temporary_(std::move(temporary)), file_(std::move(file)) {}
    Status fail(const Status& why);  // removes the temporary; returns `why`
    FileSystem* fs_ = nullptr;
    std::string path_;
    std::string temporary_;
    std::unique_ptr<WritableFile> file_;
    uint64_t bytes_written_ = 0;
    bool done_ = false;  // committed, or failed and cleaned up
};

// The whole of `bytes` into `path`, atomically and durably (see the top of this file).
[[nodiscard]] Status write_file_atomically(const std::string& path, std::string_view bytes,
                                           FileSystem& fs = default_file_system());
[[nodiscard]] Status write_file_atomically(const std::string& path, std::string_view bytes,
                                           const AtomicWriteOptions& options,
                                           FileSystem& fs = default_file_system());

// The whole content of a file; the error names the path and the cause.
Result<std::string> read_file(const std::string& path);
// read_file(from), then write_file_atomically(to, ...): a copy that is whole or absent.
[[nodiscard]] Status copy_file_atomically(const std::string& from, const std::string& to,
                                          FileSystem& fs = default_file_system());

// The folder part of `path` ("." for a bare name): the folder to fsync after renaming into it.
std::string parent_folder(const std::string& path);

}  // namespace slipway
