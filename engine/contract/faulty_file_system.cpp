// The fault-injecting FileSystem of faulty_file_system.h and the SLIPWAY_FS_FAULT hook.
#include "contract/faulty_file_system.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace slipway {
namespace {

// A substring of the path; "X$": the path ends with X.
bool matches(const std::string& path, const std::string& pattern) {
    if (!pattern.empty() && pattern.back() == '$') {
        const size_t n = pattern.size() - 1;
        return path.size() >= n && path.compare(path.size() - n, n, pattern, 0, n) == 0;
    }
    return path.find(pattern) != std::string::npos;
}

bool under(const std::string& path, const std::string& folder) {
    return path == folder || (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
                              path[folder.size()] == '/');
}

const char* operation_name(FaultyFileSystem::Operation operation) {
    switch (operation) {
        case FaultyFileSystem::Operation::kCreate:
            return "cannot create";
        case FaultyFileSystem::Operation::kSync:
            return "fsync";
        case FaultyFileSystem::Operation::kClose:
            return "close";
        case FaultyFileSystem::Operation::kRename:
            return "rename";
        case FaultyFileSystem::Operation::kSyncDir:
            return "fsync of the folder";
    }
    return "?";
}

}  // namespace

class FaultyWritableFile final : public WritableFile {
public:
    FaultyWritableFile(FaultyFileSystem& owner, std::string path, std::unique_ptr<WritableFile> file)
        : owner_(owner), path_(std::move(path)), file_(std::move(file)) {}

    Status append(std::string_view bytes) override {
        std::lock_guard lock(owner_.mutex_);
        owner_.record("append " + path_ + " " + std::to_string(bytes.size()));
        FaultyFileSystem::Written& written = owner_.written_[path_];
        std::string_view kept = bytes;
        for (const auto& [pattern, limit] : owner_.tears_) {
            if (!matches(path_, pattern)) continue;
            const uint64_t room = limit > written.appended ? limit - written.appended : 0;
            if (kept.size() > room) kept = kept.substr(0, room);
        }
        bool full = false;
        if (owner_.disk_bytes_ && matches(path_, owner_.disk_pattern_)) {
            const uint64_t room =
                *owner_.disk_bytes_ > owner_.disk_used_ ? *owner_.disk_bytes_ - owner_.disk_used_ : 0;
            if (kept.size() > room) {
                kept = kept.substr(0, room);
                full = true;
            }
            owner_.disk_used_ += kept.size();
        }
        if (Status s = file_->append(kept); !s.ok()) return s;
        written.appended += kept.size();
        if (full) return Status::Error(path_ + ": write: " + std::strerror(ENOSPC));
        return Status::Ok();
    }

    Status flush() override {
        std::lock_guard lock(owner_.mutex_);
        return file_->flush();
    }

    Status sync() override {
        std::lock_guard lock(owner_.mutex_);
        owner_.record("sync " + path_);
        if (auto injected = owner_.injected(FaultyFileSystem::Operation::kSync, path_, "fsync"))
            return *injected;
        if (Status s = file_->sync(); !s.ok()) return s;
        owner_.written_[path_].synced = owner_.written_[path_].appended;
        return Status::Ok();
    }

    Status close() override {
        std::lock_guard lock(owner_.mutex_);
        owner_.record("close " + path_);
        const Status closed = file_->close();  // a failing close(2) still closes the descriptor
        if (auto injected = owner_.injected(FaultyFileSystem::Operation::kClose, path_, "close"))
            return *injected;
        return closed;
    }

private:
    FaultyFileSystem& owner_;
    std::string path_;
    std::unique_ptr<WritableFile> file_;
};

std::optional<Status> FaultyFileSystem::injected(Operation operation, const std::string& path,
                                                 const std::string& what) {
    for (const Failure& f : failures_) {
        if (f.operation == operation && matches(path, f.pattern))
            return Status::Error(path + ": " + what + ": " + std::strerror(f.error));
    }
    return std::nullopt;
}

void FaultyFileSystem::record(std::string operation) {
    operations_.push_back(std::move(operation));
}

void FaultyFileSystem::fill_disk_after(uint64_t bytes, std::string pattern) {
    std::lock_guard lock(mutex_);
    disk_bytes_ = bytes;
    disk_pattern_ = std::move(pattern);
    disk_used_ = 0;
}

void FaultyFileSystem::fail(Operation operation, std::string pattern, int error) {
    std::lock_guard lock(mutex_);
    failures_.push_back({operation, std::move(pattern), error});
}

void FaultyFileSystem::tear_after(uint64_t bytes, std::string pattern) {
    std::lock_guard lock(mutex_);
    tears_.emplace_back(std::move(pattern), bytes);
}

void FaultyFileSystem::crash() {
    std::lock_guard lock(mutex_);
    for (const auto& [path, written] : written_) {
        std::error_code ec;
        if (std::filesystem::file_size(path, ec) > written.synced && !ec)
            std::filesystem::resize_file(path, written.synced, ec);
    }
}

std::vector<std::string> FaultyFileSystem::unsynced_renames() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [from, to] : pending_renames_)
        out.push_back(from + " -> " + to);
    return out;
}

std::vector<std::string> FaultyFileSystem::operations() const {
    std::lock_guard lock(mutex_);
    return operations_;
}

Result<std::unique_ptr<WritableFile>> FaultyFileSystem::create_file(const std::string& path, unsigned mode) {
    std::lock_guard lock(mutex_);
    record("create " + path);
    if (auto injected = this->injected(Operation::kCreate, path, operation_name(Operation::kCreate)))
        return *injected;
    Result<std::unique_ptr<WritableFile>> file = base_.create_file(path, mode);
    if (!file.ok()) return file.status();
    written_[path] = Written{};
    return std::unique_ptr<WritableFile>(std::make_unique<FaultyWritableFile>(*this, path, std::move(*file)));
}

Result<std::unique_ptr<WritableFile>> FaultyFileSystem::open_for_append(const std::string& path,
                                                                        unsigned mode) {
    std::lock_guard lock(mutex_);
    record("open_for_append " + path);
    if (auto injected = this->injected(Operation::kCreate, path, "cannot open for appending"))
        return *injected;
    Result<std::unique_ptr<WritableFile>> file = base_.open_for_append(path, mode);
    if (!file.ok()) return file.status();
    // What the file held before counts as synced: a crash only loses what this run appended unsynced.
    std::error_code ec;
    const uint64_t before = std::filesystem::file_size(path, ec);
    written_[path] = Written{ec ? 0 : before, ec ? 0 : before};
    return std::unique_ptr<WritableFile>(std::make_unique<FaultyWritableFile>(*this, path, std::move(*file)));
}

Status FaultyFileSystem::set_mode(const std::string& path, unsigned mode) {
    std::lock_guard lock(mutex_);
    record("set_mode " + path);
    return base_.set_mode(path, mode);
}

Status FaultyFileSystem::rename(const std::string& from, const std::string& to) {
    std::lock_guard lock(mutex_);
    record("rename " + from + " " + to);
    if (auto injected = this->injected(Operation::kRename, to, "cannot rename " + from + " to it"))
        return *injected;
    if (auto injected = this->injected(Operation::kRename, from, "cannot rename")) return *injected;
    if (Status s = base_.rename(from, to); !s.ok()) return s;
    // What was written under `from` (a file, or a folder's files) now lives under `to`.
    std::map<std::string, Written> moved;
    for (auto it = written_.begin(); it != written_.end();) {
        if (under(it->first, to)) {
            it = written_.erase(it);  // replaced
        } else if (under(it->first, from)) {
            moved[to + it->first.substr(from.size())] = it->second;
            it = written_.erase(it);
        } else {
            ++it;
        }
    }
    written_.merge(moved);
    pending_renames_.emplace_back(from, to);
    return Status::Ok();
}

Status FaultyFileSystem::sync_dir(const std::string& dir) {
    std::lock_guard lock(mutex_);
    record("sync_dir " + dir);
    if (auto injected = this->injected(Operation::kSyncDir, dir, operation_name(Operation::kSyncDir)))
        return *injected;
    if (Status s = base_.sync_dir(dir); !s.ok()) return s;
    pending_renames_.erase(
        std::remove_if(pending_renames_.begin(), pending_renames_.end(),
                       [&](const auto& rename) { return parent_folder(rename.second) == dir; }),
        pending_renames_.end());
    return Status::Ok();
}

Status FaultyFileSystem::remove_all(const std::string& path) {
    std::lock_guard lock(mutex_);
    record("remove_all " + path);
    for (auto it = written_.begin(); it != written_.end();)
        it = under(it->first, path) ? written_.erase(it) : std::next(it);
    return base_.remove_all(path);
}

Status FaultyFileSystem::create_dirs(const std::string& path) {
    std::lock_guard lock(mutex_);
    record("create_dirs " + path);
    return base_.create_dirs(path);
}

Result<std::unique_ptr<FaultyFileSystem>> FaultyFileSystem::from_spec(const std::string& spec) {
    auto fs = std::make_unique<FaultyFileSystem>();
    std::stringstream rules(spec);
    std::string rule;
    while (std::getline(rules, rule, ',')) {
        if (rule.empty()) continue;
        const size_t colon = rule.find(':');
        const std::string kind = rule.substr(0, colon);
        const std::string rest = colon == std::string::npos ? std::string() : rule.substr(colon + 1);
        auto bytes_then_pattern = [&](uint64_t& bytes, std::string& pattern) {
            const size_t at = rest.find(':');
            const std::string number = rest.substr(0, at);
            pattern = at == std::string::npos ? std::string() : rest.substr(at + 1);
            char* end = nullptr;
            bytes = std::strtoull(number.c_str(), &end, 10);
            return !number.empty() && *end == '\0' && number.find('-') == std::string::npos;
        };
        const std::map<std::string, Operation> failing = {{"fail_create", Operation::kCreate},
                                                          {"fail_sync", Operation::kSync},
                                                          {"fail_close", Operation::kClose},
                                                          {"fail_rename", Operation::kRename},
                                                          {"fail_sync_dir", Operation::kSyncDir}};
        uint64_t bytes = 0;
        std::string pattern;
        if (kind == "enospc_after_bytes" && bytes_then_pattern(bytes, pattern)) {
            fs->fill_disk_after(bytes, pattern);
        } else if (kind == "torn_after_bytes" && bytes_then_pattern(bytes, pattern)) {
            fs->tear_after(bytes, pattern);
        } else if (failing.count(kind) && colon != std::string::npos) {
            fs->fail(failing.at(kind), rest);
        } else {
            return Status::Error("SLIPWAY_FS_FAULT: \"" + rule +
                                 "\" is not enospc_after_bytes:N[:PATTERN], torn_after_bytes:N:PATTERN or "
                                 "fail_create|fail_sync|fail_close|fail_rename|fail_sync_dir:PATTERN");
        }
    }
    return fs;
}

Status install_file_system_faults_from_environment() {
    const char* spec = std::getenv("SLIPWAY_FS_FAULT");
    if (!spec || !*spec) return Status::Ok();
    Result<std::unique_ptr<FaultyFileSystem>> fs = FaultyFileSystem::from_spec(spec);
    if (!fs.ok()) return fs.status();
    std::cerr << "SLIPWAY_FS_FAULT=" << spec << ": injecting filesystem faults (a test hook)\n";
    set_default_file_system(fs->release());  // lives as long as the process
    return Status::Ok();
}

}  // namespace slipway
