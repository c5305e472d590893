// The libssh implementation of Session: opens a connection (through ProxyJump hosts when configured),
// verifies the host key against known_hosts, authenticates, and keeps the connection alive.
#pragma once

#include <memory>

#include "contract/status.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

// Resolves `options` through the ssh config (ConnectOptions::ssh_config_file), connects within
// connect_timeout, checks the host key and authenticates, asking `callbacks` for decisions and secrets.
// Failures carry a code: kUnavailable (cannot reach), kTimeout, kHostKeyRejected (unknown key refused or
// a CHANGED key: the message shows both fingerprints), kAuthFailed (names user and host).
// The returned Session guards its libssh handle with a mutex, so a background keepalive can share it;
// callers should still use it from one worker at a time (calls serialize, a slow exec blocks the rest).
Result<std::unique_ptr<Session>> connect_ssh(const ConnectOptions& options, SessionCallbacks callbacks = {});

}  // namespace slipway::remote
