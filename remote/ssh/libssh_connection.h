// One authenticated libssh connection to one host (internal to remote/ssh): options, TCP or a given
// socket, host key verification against known_hosts, and authentication through SessionCallbacks.
#pragma once

#include <libssh/libssh.h>

#include <memory>
#include <set>
#include <string>

#include "contract/status.h"
#include "remote/ssh/session.h"
#include "remote/ssh/ssh_config.h"

namespace slipway::remote {

// Owns an ssh_session; disconnects and frees it on destruction.
class LibsshConnection {
public:
    // Connects to target.hostname:port, or over `socket_fd` (a ProxyJump tunnel) when it is >= 0; the
    // session then owns the socket. `accepted_once` holds the host keys the user accepted
    // "once" in this Session as "<known_hosts host name> <fingerprint>" (a reconnect does not ask again; the
    // same key on another host or port does), and receives newly accepted ones.
    static Result<std::unique_ptr<LibsshConnection>> open(const SshTarget& target, int socket_fd,
                                                          bool use_agent, const SessionCallbacks& callbacks,
                                                          std::set<std::string>& accepted_once);
    ~LibsshConnection();
    LibsshConnection(const LibsshConnection&) = delete;
    LibsshConnection& operator=(const LibsshConnection&) = delete;

    ssh_session raw() const { return session_; }
    bool connected() const { return session_ != nullptr && ssh_is_connected(session_) != 0; }
    // "user@host:port"
    const std::string& name() const { return name_; }

private:
    LibsshConnection(ssh_session session, std::string name) : session_(session), name_(std::move(name)) {}
    ssh_session session_;
    std::string name_;
};

// "SHA256:<base64>" of a public key, as ssh-keygen -lf prints it.
std::string sha256_fingerprint(ssh_key key);

}  // namespace slipway::remote
