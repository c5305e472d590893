// FakeSession: scripted commands, an in-memory file system and injected faults (see fake_session.h).
#include "remote/ssh/fake_session.h"

#include <fstream>
#include <sstream>

namespace slipway::remote {

FakeSession::FakeSession(std::string description) : description_(std::move(description)) {}

void FakeSession::queue_exec(Result<ExecResult> response) {
    queued_.push_back(std::move(response));
}

void FakeSession::on_exec_prefix(std::string prefix, ExecResult response) {
    rules_.push_back({std::move(prefix), std::move(response)});
}

void FakeSession::set_exec_handler(ExecHandler handler) {
    handler_ = std::move(handler);
}

void FakeSession::fail_next(FakeFault fault, int count) {
    if (count > 0) faults_.emplace_back(fault, count);
}

void FakeSession::drop_connection() {
    connected_ = false;
    for (const auto& process : processes_)
        process->lost = true;
}

namespace {

// The RemoteProcess of a FakeSession: plays back its FakeProcessState.
class FakeProcess : public RemoteProcess {
public:
    FakeProcess(std::shared_ptr<FakeProcessState> state, std::string where)
        : state_(std::move(state)), where_(std::move(where)) {}
    ~FakeProcess() override { (void)FakeProcess::terminate(); }

    Status write_stdin(const std::string& bytes) override {
        if (Status s = check("write_stdin"); !s) return s;
        if (state_->stdin_closed)
            return Status::Error("write_stdin: stdin of '" + state_->command + "' is closed");
        state_->stdin_bytes += bytes;
        if (state_->on_stdin) state_->on_stdin(*state_);
        return Status::Ok();
    }
    Status close_stdin() override {
        if (Status s = check("close_stdin"); !s) return s;
        state_->stdin_closed = true;
        return Status::Ok();
    }
    Result<Output> read_available(std::chrono::milliseconds) override {
        if (exited_) return Output{};
        if (Status s = check("read_available"); !s) return s;
        Output output{std::move(state_->out), std::move(state_->err)};
        state_->out.clear();
        state_->err.clear();
        if (state_->exit_code) exited_ = true;
        return output;
    }
    bool exited() const override { return exited_; }
    int exit_status() const override { return exited_ && state_->exit_code ? *state_->exit_code : -1; }
    Status terminate() override {
        if (!exited_) state_->terminated = true;
        exited_ = true;
        return Status::Ok();
    }

private:
    Status check(const char* operation) const {
        if (state_->lost)
            return Status::Error(StatusCode::kUnavailable, std::string(operation) + " '" + state_->command +
                                                               "' on " + where_ + ": connection lost");
        if (exited_)
            return Status::Error(StatusCode::kUnavailable, std::string(operation) + " '" + state_->command +
                                                               "': the process has ended");
        return Status::Ok();
    }

    std::shared_ptr<FakeProcessState> state_;
    std::string where_;
    bool exited_ = false;
};

}  // namespace

Result<std::unique_ptr<RemoteProcess>> FakeSession::start_process(const std::string& command) {
    if (Status s = enter("start_process", command); !s) return s;
    auto state = std::make_shared<FakeProcessState>();
    state->command = command;
    if (starter_) starter_(*state);
    processes_.push_back(state);
    return std::unique_ptr<RemoteProcess>(std::make_unique<FakeProcess>(state, description_));
}

std::string FakeSession::normalize(const std::string& path) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/')
        p.pop_back();
    return p;
}

Status FakeSession::enter(const char* operation, const std::string& subject) {
    const std::string where = std::string(operation) + " '" + subject + "' on " + description_;
    if (!faults_.empty()) {
        const FakeFault fault = faults_.front().first;
        if (--faults_.front().second == 0) faults_.pop_front();
        switch (fault) {
            case FakeFault::kTimeout:
                return Status::Error(StatusCode::kTimeout, where + ": timed out (injected)");
            case FakeFault::kDropConnection:
                connected_ = false;
                return Status::Error(StatusCode::kUnavailable, where + ": connection lost (injected)");
            case FakeFault::kAuthFailure:
                connected_ = false;
                return Status::Error(StatusCode::kAuthFailed, where + ": authentication failed (injected)");
        }
    }
    if (!connected_) return Status::Error(StatusCode::kUnavailable, where + ": not connected");
    return Status::Ok();
}

Status FakeSession::reconnect() {
    ++reconnect_count_;
    connected_ = true;  // a fault below may take it down again
    return enter("reconnect", description_);
}

Result<ExecResult> FakeSession::exec(const std::string& command, std::chrono::milliseconds /*timeout*/) {
    commands_.push_back(command);
    if (Status s = enter("exec", command); !s) return s;
    if (!queued_.empty()) {
        Result<ExecResult> response = std::move(queued_.front());
        queued_.pop_front();
        return response;
    }
    for (const PrefixRule& rule : rules_) {
        if (command.compare(0, rule.prefix.size(), rule.prefix) == 0) return rule.response;
    }
    if (handler_) return handler_(command);
    return Result<ExecResult>::Error("fake session " + description_ +
                                     ": no scripted response for command: " + command);
}

void FakeSession::put_file(const std::string& path, std::string bytes, std::uint32_t mode) {
    files_[normalize(path)] = Entry{std::move(bytes), mode, false, ++clock_};
}

void FakeSession::append_file(const std::string& path, const std::string& bytes) {
    Entry& entry = files_[normalize(path)];
    entry.bytes += bytes;
    entry.mtime = ++clock_;
}

void FakeSession::put_dir(const std::string& path, std::uint32_t mode) {
    files_[normalize(path)] = Entry{"", mode, true, ++clock_};
}

void FakeSession::put_symlink(const std::string& path, const std::string& target) {
    Entry entry{"", 0777, false, ++clock_};
    entry.link_target = target;
    files_[normalize(path)] = std::move(entry);
}

std::map<std::string, FakeSession::Entry>::const_iterator FakeSession::follow_links(
    const std::string& path) const {
    std::string current = normalize(path);
    for (int hop = 0; hop < 8; ++hop) {
        auto it = files_.find(current);
        if (it == files_.end() || it->second.link_target.empty()) return it;
        const std::string& target = it->second.link_target;
        current = target[0] == '/' ? normalize(target)
                                   : normalize(current.substr(0, current.rfind('/') + 1) + target);
    }
    return files_.end();
}

bool FakeSession::has(const std::string& path) const {
    return files_.count(normalize(path)) > 0;
}

std::string FakeSession::file(const std::string& path) const {
    auto it = files_.find(normalize(path));
    return it == files_.end() ? std::string() : it->second.bytes;
}

std::uint32_t FakeSession::mode(const std::string& path) const {
    auto it = files_.find(normalize(path));
    return it == files_.end() ? 0 : it->second.mode;
}

Status FakeSession::upload_file(const std::string& local, const std::string& remote, std::uint32_t mode) {
    std::ifstream in(local, std::ios::binary);
    if (!in) return Status::Error(StatusCode::kNotFound, "upload: cannot read local file " + local);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return upload_bytes(bytes.str(), remote, mode);
}

Status FakeSession::upload_bytes(const std::string& bytes, const std::string& remote, std::uint32_t mode) {
    if (Status s = enter("upload", remote); !s) return s;
    auto it = files_.find(normalize(remote));
    if (it != files_.end() && it->second.is_dir) {
        return Status::Error("upload to " + remote + " on " + description_ + ": is a folder");
    }
    put_file(remote, bytes, mode);
    return Status::Ok();
}

Status FakeSession::download_file(const std::string& remote, const std::string& local) {
    if (Status s = enter("download", remote); !s) return s;
    auto it = files_.find(normalize(remote));
    if (it == files_.end() || it->second.is_dir) {
        return Status::Error(StatusCode::kNotFound,
                             "download " + remote + " on " + description_ + ": no such file");
    }
    std::ofstream out(local, std::ios::binary | std::ios::trunc);
    out << it->second.bytes;
    if (!out) return Status::Error("download: cannot write local file " + local);
    return Status::Ok();
}

Result<std::string> FakeSession::read_range(const std::string& remote, std::uint64_t offset,
                                            std::size_t max_bytes) {
    if (Status s = enter("read", remote); !s) return s;
    auto it = files_.find(normalize(remote));
    if (it == files_.end() || it->second.is_dir) {
        return Result<std::string>::Error(StatusCode::kNotFound,
                                          "read " + remote + " on " + description_ + ": no such file");
    }
    const std::string& bytes = it->second.bytes;
    if (offset >= bytes.size()) return std::string();
    return bytes.substr(static_cast<std::size_t>(offset), max_bytes);
}

Result<RemoteStat> FakeSession::stat(const std::string& remote) {
    if (Status s = enter("stat", remote); !s) return s;
    auto it = follow_links(remote);
    if (it == files_.end()) return RemoteStat{};
    return RemoteStat{true, it->second.bytes.size(), it->second.mtime, it->second.mode, it->second.is_dir};
}

Result<std::vector<RemoteDirEntry>> FakeSession::list_directory(const std::string& remote) {
    if (Status s = enter("list", remote); !s) return s;
    const auto it = follow_links(remote);
    const std::string path = it != files_.end() ? it->first : normalize(remote);
    if (it != files_.end() && !it->second.is_dir)
        return Status::Error("list " + remote + " on " + description_ + ": not a folder");
    // Folders may also exist only as the parents of put files.
    const std::string prefix = path == "/" ? "/" : path + "/";
    std::map<std::string, RemoteDirEntry> children;
    for (auto child = files_.lower_bound(prefix);
         child != files_.end() && child->first.compare(0, prefix.size(), prefix) == 0; ++child) {
        const std::string rest = child->first.substr(prefix.size());
        const std::size_t slash = rest.find('/');
        RemoteDirEntry entry;
        entry.name = rest.substr(0, slash);
        if (slash != std::string::npos) {
            entry.type = RemoteEntryType::kDirectory;
            entry.mode = 0755;
            children.emplace(entry.name, entry);  // an explicit entry, listed before its children, wins
            continue;
        }
        const Entry& e = child->second;
        entry.type = !e.link_target.empty() ? RemoteEntryType::kSymlink
                     : e.is_dir             ? RemoteEntryType::kDirectory
                                            : RemoteEntryType::kFile;
        entry.size = e.link_target.empty() ? e.bytes.size() : e.link_target.size();
        entry.mode = e.mode;
        entry.mtime = e.mtime;
        children[entry.name] = entry;
    }
    if (it == files_.end() && children.empty())
        return Status::Error(StatusCode::kNotFound,
                             "list " + remote + " on " + description_ + ": no such folder");
    std::vector<RemoteDirEntry> entries;
    for (auto& [name, entry] : children)
        entries.push_back(std::move(entry));
    return entries;
}

Status FakeSession::mkdir_p(const std::string& remote, std::uint32_t mode) {
    if (Status s = enter("mkdir", remote); !s) return s;
    const std::string path = normalize(remote);
    for (std::size_t pos = 1; pos <= path.size(); ++pos) {
        if (pos != path.size() && path[pos] != '/') continue;
        const std::string prefix = path.substr(0, pos);
        auto it = files_.find(prefix);
        if (it == files_.end()) {
            files_[prefix] = Entry{"", mode, true, ++clock_};
        } else if (!it->second.is_dir) {
            return Status::Error("mkdir -p " + remote + " on " + description_ + ": " + prefix + " is a file");
        }
    }
    return Status::Ok();
}

Status FakeSession::remove(const std::string& remote) {
    if (Status s = enter("remove", remote); !s) return s;
    const std::string path = normalize(remote);
    auto it = files_.find(path);
    if (it == files_.end()) return Status::Ok();
    if (it->second.is_dir) {
        auto child = files_.lower_bound(path + "/");
        if (child != files_.end() && child->first.compare(0, path.size() + 1, path + "/") == 0) {
            return Status::Error("remove " + remote + " on " + description_ + ": folder is not empty");
        }
    }
    files_.erase(it);
    return Status::Ok();
}

}  // namespace slipway::remote
