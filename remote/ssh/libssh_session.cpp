// LibsshSession: connection lifecycle (ProxyJump chain, reconnect, keepalive) and exec (see
// libssh_session_impl.h); the SFTP calls are in libssh_sftp.cpp.
#include <chrono>

#include "remote/ssh/libssh_session.h"
#include "remote/ssh/libssh_session_impl.h"

namespace slipway::remote {

Result<std::unique_ptr<Session>> connect_ssh(const ConnectOptions& options, SessionCallbacks callbacks) {
    Result<SshConfig> config = SshConfig{};
    if (options.ssh_config_file != "none") {
        const std::string path =
            options.ssh_config_file.empty() ? local_home_dir() + "/.ssh/config" : options.ssh_config_file;
        config = load_ssh_config(path, local_home_dir());
        if (!config) return config.status();
    }
    auto target = resolve_ssh_target(options, *config, local_home_dir(), local_user_name());
    if (!target) return target.status();
    auto session = std::make_unique<LibsshSession>(options, std::move(callbacks), *config, *target);
    if (Status s = session->connect(); !s) return s;
    return std::unique_ptr<Session>(std::move(session));
}

LibsshSession::LibsshSession(ConnectOptions options, SessionCallbacks callbacks, SshConfig config,
                             SshTarget target)
    : options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      config_(std::move(config)),
      target_(std::move(target)) {
    if (target_.keepalive_interval.count() > 0) keepalive_thread_ = std::thread([this] { keepalive_loop(); });
}

LibsshSession::~LibsshSession() {
    {
        std::lock_guard<std::mutex> lock(*mutex_);
        stopping_ = true;
    }
    keepalive_wake_.notify_all();
    if (keepalive_thread_.joinable()) keepalive_thread_.join();
    std::lock_guard<std::mutex> lock(*mutex_);
    disconnect_locked();
}

std::string LibsshSession::describe() const {
    std::string name = target_.user + "@" + target_.hostname + ":" + std::to_string(target_.port);
    for (const JumpHost& jump : target_.jumps)
        name += " via " + jump.host;
    return name;
}

Status LibsshSession::connect() {
    std::lock_guard<std::mutex> lock(*mutex_);
    return connect_locked();
}

Status LibsshSession::connect_locked() {
    disconnect_locked();
    // Resolve every hop through the ssh config first: each tunnel needs the next hop's address.
    std::vector<SshTarget> hops;
    for (const JumpHost& jump : target_.jumps) {
        ConnectOptions hop_options;
        hop_options.host = jump.host;
        hop_options.port = jump.port;
        hop_options.user = jump.user;
        hop_options.proxy_jump = "none";  // the chain is given by the outer ProxyJump list
        hop_options.identity_files = options_.identity_files;
        hop_options.known_hosts_file = options_.known_hosts_file;
        hop_options.connect_timeout = options_.connect_timeout;
        auto hop = resolve_ssh_target(hop_options, config_, local_home_dir(), local_user_name());
        if (!hop) return Status::Error("jump host " + jump.host + ": " + hop.error());
        // The first hop may be reached through its ProxyCommand; a later hop is reached through the tunnel
        // of the one before it, so a ProxyCommand of its own cannot apply (it is refused, not dropped).
        if (!hops.empty() && !hop->proxy_command.empty()) {
            return Status::Error("jump host " + jump.host + ": its ProxyCommand '" + hop->proxy_command +
                                 "' cannot apply to a hop reached through an earlier ProxyJump hop");
        }
        hops.push_back(*hop);
    }
    int socket_fd = -1;
    for (std::size_t i = 0; i < hops.size(); ++i) {
        auto jump =
            LibsshConnection::open(hops[i], socket_fd, options_.use_agent, callbacks_, accepted_once_);
        if (!jump) {
            disconnect_locked();
            return Status::Error(jump.code(), "jump host " + hops[i].alias + ": " + jump.error());
        }
        const SshTarget& next = i + 1 < hops.size() ? hops[i + 1] : target_;
        auto tunnel = JumpTunnel::open(std::move(*jump), next.hostname, next.port);
        if (!tunnel) {
            disconnect_locked();
            return tunnel.status();
        }
        socket_fd = (*tunnel)->take_socket();
        tunnels_.push_back(std::move(*tunnel));
    }
    auto connection =
        LibsshConnection::open(target_, socket_fd, options_.use_agent, callbacks_, accepted_once_);
    if (!connection) {
        disconnect_locked();
        return connection.status();
    }
    connection_ = std::move(*connection);
    return Status::Ok();
}

void LibsshSession::disconnect_locked() {
    // Started processes' channels go with the connection.
    for (LibsshProcess* process : processes_)
        detach_process_locked(process);
    processes_.clear();
    if (sftp_ != nullptr) {
        sftp_free(sftp_);
        sftp_ = nullptr;
    }
    connection_.reset();
    // Innermost tunnel first: each one carries the connection of the next hop.
    while (!tunnels_.empty())
        tunnels_.pop_back();
}

void LibsshSession::disconnect() {
    std::lock_guard<std::mutex> lock(*mutex_);
    disconnect_locked();
}

bool LibsshSession::connected_locked() const {
    if (!connection_ || !connection_->connected()) return false;
    for (const auto& tunnel : tunnels_) {
        if (!tunnel->alive()) return false;
    }
    return true;
}

bool LibsshSession::is_connected() const {
    std::lock_guard<std::mutex> lock(*mutex_);
    return connected_locked();
}

Status LibsshSession::reconnect() {
    std::lock_guard<std::mutex> lock(*mutex_);
    return connect_locked();
}

Status LibsshSession::require_connection(const std::string& operation) const {
    if (connected_locked()) return Status::Ok();
    return Status::Error(StatusCode::kUnavailable, operation + ": not connected to " + describe() +
                                                       " (the connection was lost; reconnect)");
}

Status LibsshSession::failure(const std::string& what) const {
    const std::string error = connection_ ? ssh_get_error(connection_->raw()) : "not connected";
    if (!connected_locked()) {
        return Status::Error(StatusCode::kUnavailable,
                             what + " on " + describe() + ": connection lost (" + error + ")");
    }
    return Status::Error(what + " on " + describe() + ": " + error);
}

Result<ExecResult> LibsshSession::exec(const std::string& command, std::chrono::milliseconds timeout) {
    std::lock_guard<std::mutex> lock(*mutex_);
    return exec_locked(command, timeout);
}

Result<ExecResult> LibsshSession::exec_locked(const std::string& command, std::chrono::milliseconds timeout) {
    if (Status s = require_connection("exec"); !s) return s;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    ssh_session session = connection_->raw();
    ssh_channel channel = ssh_channel_new(session);
    if (channel == nullptr) return failure("exec: cannot create a channel");
    struct ChannelGuard {
        ssh_channel channel;
        ~ChannelGuard() {
            ssh_channel_close(channel);
            ssh_channel_free(channel);
        }
    } guard{channel};
    if (ssh_channel_open_session(channel) != SSH_OK) return failure("exec: cannot open a channel");
    if (ssh_channel_request_exec(channel, command.c_str()) != SSH_OK)
        return failure("exec: the server refused the command");
    // Nothing is written to the command's stdin: close it, so a command that reads stdin ends instead of
    // waiting for the timeout (as `ssh host cmd </dev/null`).
    if (ssh_channel_send_eof(channel) != SSH_OK)
        return failure("exec: closing the input of '" + command + "'");

    ExecResult result;
    char buffer[16384];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            // Ask the server to end the command (OpenSSH honours "signal" requests); closing the channel
            // follows in the guard either way.
            ssh_channel_request_send_signal(channel, "TERM");
            return Result<ExecResult>::Error(StatusCode::kTimeout,
                                             "exec on " + describe() + ": no result after " +
                                                 std::to_string(timeout.count()) + " ms: " + command);
        }
        const int slice = static_cast<int>(std::min<long long>(left.count(), 200));
        const int n = ssh_channel_read_timeout(channel, buffer, sizeof buffer, 0, slice);
        if (n == SSH_ERROR) return failure("exec: reading the output of '" + command + "'");
        if (n > 0) result.out.append(buffer, static_cast<std::size_t>(n));
        int e = 0;
        while ((e = ssh_channel_read_nonblocking(channel, buffer, sizeof buffer, 1)) > 0) {
            result.err.append(buffer, static_cast<std::size_t>(e));
        }
        if (e == SSH_ERROR) return failure("exec: reading the errors of '" + command + "'");
        if (n <= 0 && ssh_channel_is_eof(channel)) {
            // Drain what arrived with the EOF.
            while ((e = ssh_channel_read_nonblocking(channel, buffer, sizeof buffer, 0)) > 0) {
                result.out.append(buffer, static_cast<std::size_t>(e));
            }
            while ((e = ssh_channel_read_nonblocking(channel, buffer, sizeof buffer, 1)) > 0) {
                result.err.append(buffer, static_cast<std::size_t>(e));
            }
            break;
        }
    }
    result.exit_status = ssh_channel_get_exit_status(channel);
    return result;
}

void LibsshSession::keepalive_loop() {
    std::unique_lock<std::mutex> lock(*mutex_);
    while (!stopping_) {
        keepalive_wake_.wait_for(lock, target_.keepalive_interval, [this] { return stopping_; });
        if (stopping_) break;
        // An SSH_MSG_IGNORE keeps NAT and firewalls from dropping an idle connection, and a write to a dead
        // peer makes libssh notice that the connection is gone.
        if (connection_ && connection_->connected()) ssh_send_ignore(connection_->raw(), "keepalive");
    }
}

}  // namespace slipway::remote
