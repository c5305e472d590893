// LibsshSession (internal to remote/ssh): the Session over one libssh connection, its ProxyJump tunnels,
// a lazily opened SFTP channel, a keepalive thread and the channels of started processes
// (libssh_process.cpp). Every public call, and every call of its processes, holds *mutex_.
#pragma once

#include <libssh/sftp.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "remote/ssh/libssh_connection.h"
#include "remote/ssh/libssh_tunnel.h"
#include "remote/ssh/session.h"
#include "remote/ssh/ssh_config.h"

namespace slipway::remote {

class LibsshProcess;

class LibsshSession : public Session {
public:
    LibsshSession(ConnectOptions options, SessionCallbacks callbacks, SshConfig config, SshTarget target);
    ~LibsshSession() override;

    // Opens the connection (tunnels first); used by connect_ssh() and reconnect().
    Status connect();

    std::string describe() const override;
    bool is_connected() const override;
    Status reconnect() override;
    void disconnect() override;
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
    friend class LibsshProcess;
    // Callers hold *mutex_.
    Status connect_locked();
    void disconnect_locked();
    bool connected_locked() const;
    Result<ExecResult> exec_locked(const std::string& command, std::chrono::milliseconds timeout);
    Status require_connection(const std::string& operation) const;
    // Kind of failure after a libssh call failed: the connection is gone (kUnavailable) or not.
    Status failure(const std::string& what) const;
    Result<sftp_session> sftp_locked();
    Status sftp_failure(const std::string& what) const;
    Status upload_stream_locked(const std::string& remote, std::uint32_t mode,
                                const std::function<Result<std::size_t>(char*, std::size_t)>& read_chunk);
    void keepalive_loop();

    const ConnectOptions options_;
    const SessionCallbacks callbacks_;
    const SshConfig config_;
    const SshTarget target_;

    // Shared with the processes, which may outlive the session: a process's channel is closed (and its
    // pointer to the session dropped) under this lock when the session disconnects or goes.
    const std::shared_ptr<std::mutex> mutex_ = std::make_shared<std::mutex>();
    std::set<LibsshProcess*> processes_;
    std::vector<std::unique_ptr<JumpTunnel>> tunnels_;  // outermost first
    std::unique_ptr<LibsshConnection> connection_;
    sftp_session sftp_ = nullptr;
    std::set<std::string> accepted_once_;  // "host fingerprint" pairs accepted "once" in this Session

    std::condition_variable keepalive_wake_;
    bool stopping_ = false;
    std::thread keepalive_thread_;
};

// Closes a started process's channel because its session disconnects or goes: its later calls fail with
// kUnavailable. The caller holds the session's *mutex_ (libssh_process.cpp).
void detach_process_locked(LibsshProcess* process);

// "path" with a leading "~/" made relative (SFTP paths are relative to the login folder).
std::string sftp_path(const std::string& remote);

}  // namespace slipway::remote
