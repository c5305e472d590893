// A FileSystem that injects the faults a real disk gives only to root or by bad luck: a full disk after N
// bytes (ENOSPC), a failing create, fsync, close, rename or folder fsync, a torn file (bytes that were
// "written" but never arrive), and a crash that drops every byte not yet fsynced. Unit tests pass one
// explicitly; the engine installs one as the default when SLIPWAY_FS_FAULT is set (a test hook, like
// SLIPWAY_FAULT_HANG_AT in train/fault_injection.h), so `slipway-engine train` can meet a full disk in CI:
//
//   SLIPWAY_FS_FAULT=RULE[,RULE...]  where PATTERN is a substring of the path (empty: every path), or
//                                    X$ for paths that end with X
//     enospc_after_bytes:N[:PATTERN]   appends fail with ENOSPC once N bytes in all went to matching files
//     fail_create:PATTERN  fail_sync:PATTERN  fail_close:PATTERN  fail_rename:PATTERN  fail_sync_dir:PATTERN
//                                      that operation fails with EIO on matching paths
//     torn_after_bytes:K:PATTERN       matching files keep their first K bytes; later appends "succeed"
#pragma once

#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "contract/file_system.h"

namespace slipway {

class FaultyFileSystem final : public FileSystem {
public:
    enum class Operation { kCreate, kSync, kClose, kRename, kSyncDir };

    explicit FaultyFileSystem(FileSystem& base = posix_file_system()) : base_(base) {}

    // Parses SLIPWAY_FS_FAULT's syntax (above); errors name the rule.
    static Result<std::unique_ptr<FaultyFileSystem>> from_spec(const std::string& spec);

    // ENOSPC once more than `bytes` bytes in all were appended to files whose path contains `pattern`; the
    // append that crosses the limit writes the part that fits, as write(2) would.
    void fill_disk_after(uint64_t bytes, std::string pattern = "");
    // `operation` on paths matching `pattern` (as in SLIPWAY_FS_FAULT) fails with `error` (rename: either
    // path).
    void fail(Operation operation, std::string pattern, int error = EIO);
    // Files whose path contains `pattern` keep their first `bytes` bytes; appends past them report success.
    void tear_after(uint64_t bytes, std::string pattern);

    // A power cut: every file created through this object is cut back to the bytes it had at its last
    // fsync (the page cache is lost), wherever renames took it.
    void crash();
    // Renames whose folder was not fsynced after them (a crash could undo them).
    std::vector<std::string> unsynced_renames() const;
    // Every call, in order: "create P", "open_for_append P", "append P N", "sync P", "close P", "rename A B",
    // "sync_dir D", "remove_all P", "create_dirs P", "set_mode P".
    std::vector<std::string> operations() const;

    Result<std::unique_ptr<WritableFile>> create_file(const std::string& path, unsigned mode) override;
    Result<std::unique_ptr<WritableFile>> open_for_append(const std::string& path, unsigned mode) override;
    Status set_mode(const std::string& path, unsigned mode) override;
    Status rename(const std::string& from, const std::string& to) override;
    Status sync_dir(const std::string& dir) override;
    Status remove_all(const std::string& path) override;
    Status create_dirs(const std::string& path) override;

private:
    friend class FaultyWritableFile;
    struct Failure {
        Operation operation;
        std::string pattern;
        int error;
    };
    struct Written {
        uint64_t appended = 0;  // bytes that reached the file
        uint64_t synced = 0;    // of which fsynced
    };
    // Under mutex_.
    std::optional<Status> injected(Operation operation, const std::string& path, const std::string& what);
    void record(std::string operation);

    FileSystem& base_;
    mutable std::mutex mutex_;
    std::vector<Failure> failures_;
    std::optional<uint64_t> disk_bytes_;
    std::string disk_pattern_;
    uint64_t disk_used_ = 0;
    std::vector<std::pair<std::string, uint64_t>> tears_;
    std::map<std::string, Written> written_;                            // by current path
    std::vector<std::pair<std::string, std::string>> pending_renames_;  // (from, to) not yet dir-synced
    std::vector<std::string> operations_;
};

// Installs a FaultyFileSystem as the process default when SLIPWAY_FS_FAULT is set (and says so on stderr);
// does nothing otherwise. A malformed value is an error naming it.
[[nodiscard]] Status install_file_system_faults_from_environment();

}  // namespace slipway
