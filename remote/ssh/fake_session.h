// FakeSession: a Session with no network, for unit tests of code built on Session (Slurm client, log
// follower, deployment). It answers commands from a script, keeps SFTP files in memory, and injects the
// faults a real cluster produces: timeouts, dropped connections, auth failures, non-zero exits.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "remote/ssh/session.h"

namespace slipway::remote {

// A fault the next calls of the fake produce.
enum class FakeFault {
    kTimeout,         // the call fails with kTimeout (exec: after the command was recorded)
    kDropConnection,  // the connection is lost: this call and all later ones fail with kUnavailable
    kAuthFailure,     // the call fails with kAuthFailed (for reconnect: the server refuses the key)
};

// The command's side of a process started on a FakeSession: the test reads what was written to stdin and
// queues what the command prints and how it ends. Shared by the test and the RemoteProcess.
struct FakeProcessState {
    std::string command;
    std::string stdin_bytes;  // everything written so far
    bool stdin_closed = false;
    std::atomic<bool> terminated{
        false};  // terminate() was called (or the process was destroyed) before it ended
    // The connection dropped: every later call fails with kUnavailable. Atomic: a test may drop the
    // connection while another thread reads the process.
    std::atomic<bool> lost{false};
    std::string out, err;          // returned by the next read_available()
    std::optional<int> exit_code;  // set: the command ends once out and err were read
    // Called after each write_stdin() (e.g. answer one request line).
    std::function<void(FakeProcessState&)> on_stdin;
};

class FakeSession : public Session {
public:
    using ExecHandler = std::function<Result<ExecResult>(const std::string& command)>;

    explicit FakeSession(std::string description = "tester@fake-host:22");

    // --- Scripting commands. Lookup order: queued responses, then rules (first match), then the handler;
    // a command nothing answers fails with kError naming the command.
    // The next exec (whatever its command) gets `response`; queued responses are used in order.
    void queue_exec(Result<ExecResult> response);
    // Every command that starts with `prefix` gets `response`.
    void on_exec_prefix(std::string prefix, ExecResult response);
    void set_exec_handler(ExecHandler handler);
    // Every command exec() was called with, in order (including those that failed by an injected fault).
    const std::vector<std::string>& commands() const { return commands_; }

    // --- Scripting processes: every start_process() gets a new state, which `starter` (if set) prepares
    // (a handler for its stdin, output queued from the start). processes() lists them in order.
    using ProcessStarter = std::function<void(FakeProcessState&)>;
    void set_process_starter(ProcessStarter starter) { starter_ = std::move(starter); }
    const std::vector<std::shared_ptr<FakeProcessState>>& processes() const { return processes_; }

    // --- Faults. `fail_next(f, n)`: the next n calls (any method; reconnect counts) fail with f.
    void fail_next(FakeFault fault, int count = 1);
    // The connection is lost now (as if the server went away), started processes with it (mid-stream);
    // reconnect() restores it.
    void drop_connection();
    int reconnect_count() const { return reconnect_count_; }

    // --- The in-memory file system used by the SFTP calls. Paths are used as given (no normalization but
    // trailing '/' removal); parents of a put file need not exist.
    void put_file(const std::string& path, std::string bytes, std::uint32_t mode = 0644);
    void append_file(const std::string& path, const std::string& bytes);
    void put_dir(const std::string& path, std::uint32_t mode = 0755);
    // A symbolic link to `target` (absolute, or relative to the link's folder): list_directory() shows it
    // as a link, stat() follows it.
    void put_symlink(const std::string& path, const std::string& target);
    bool has(const std::string& path) const;
    // The file's bytes; empty when missing (use has() to tell).
    std::string file(const std::string& path) const;
    std::uint32_t mode(const std::string& path) const;

    // --- Session
    std::string describe() const override { return description_; }
    bool is_connected() const override { return connected_; }
    Status reconnect() override;
    void disconnect() override { drop_connection(); }
    Result<ExecResult> exec(const std::string& command, std::chrono::milliseconds timeout) override;
    Result<std::unique_ptr<RemoteProcess>> start_process(const std::string& command) override;
    Status upload_file(const std::string& local, const std::string& remote, std::uint32_t mode) override;
    Status upload_bytes(const std::string& bytes, const std::string& remote, std::uint32_t mode) override;
    Status download_file(const std::string& remote, const std::string& local) override;
    Result<std::string> read_range(const std::string& remote, std::uint64_t offset,
                                   std::size_t max_bytes) override;
    Result<RemoteStat> stat(const std::string& remote) override;
    Result<std::vector<RemoteDirEntry>> list_directory(const std::string& remote) override;
    Status mkdir_p(const std::string& remote, std::uint32_t mode = 0755) override;
    Status remove(const std::string& remote) override;

private:
    struct Entry {
        std::string bytes;
        std::uint32_t mode = 0644;
        bool is_dir = false;
        std::int64_t mtime = 0;
        std::string link_target;  // non-empty: a symbolic link
    };
    struct PrefixRule {
        std::string prefix;
        ExecResult response;
    };

    // Applies connection state and injected faults for one call; Ok when the call may proceed.
    Status enter(const char* operation, const std::string& subject);
    static std::string normalize(const std::string& path);
    // The entry at `path` with symbolic links followed (a few hops at most); end() when missing or dangling.
    std::map<std::string, Entry>::const_iterator follow_links(const std::string& path) const;

    std::string description_;
    bool connected_ = true;
    int reconnect_count_ = 0;
    std::int64_t clock_ = 1700000000;  // mtimes advance by one second per write
    std::deque<std::pair<FakeFault, int>> faults_;
    std::deque<Result<ExecResult>> queued_;
    std::vector<PrefixRule> rules_;
    ExecHandler handler_;
    ProcessStarter starter_;
    std::vector<std::shared_ptr<FakeProcessState>> processes_;
    std::vector<std::string> commands_;
    std::map<std::string, Entry> files_;
};

}  // namespace slipway::remote
