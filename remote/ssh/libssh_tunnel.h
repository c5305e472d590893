// ProxyJump for libssh 0.10 (which has no ProxyJump option): a direct-tcpip channel through an
// authenticated jump connection, bridged to one end of a socket pair whose other end the next hop's
// libssh session uses as its socket. A pump thread owns the jump connection from then on.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "contract/status.h"
#include "remote/ssh/libssh_connection.h"

namespace slipway::remote {

class JumpTunnel {
public:
    // Opens a channel from `jump` to host:port (as the jump host resolves it).
    static Result<std::unique_ptr<JumpTunnel>> open(std::unique_ptr<LibsshConnection> jump,
                                                    const std::string& host, int port);
    ~JumpTunnel();
    JumpTunnel(const JumpTunnel&) = delete;
    JumpTunnel& operator=(const JumpTunnel&) = delete;

    // The socket for the next hop's session (ssh_options SSH_OPTIONS_FD), handed over once: the
    // session closes it.
    int take_socket();
    bool alive() const { return !finished_; }

private:
    JumpTunnel(std::unique_ptr<LibsshConnection> jump, ssh_channel channel, int pump_fd, int client_fd);
    void pump();

    std::unique_ptr<LibsshConnection> jump_;
    ssh_channel channel_;
    int pump_fd_;
    int client_fd_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> finished_{false};
    std::thread thread_;
};

}  // namespace slipway::remote
