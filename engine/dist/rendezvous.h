// The job's rendezvous secret and the port rank 0 publishes (no torch). c10d's TCPStore has no
// authentication, so every key a job uses lives under a label derived from a random per-job secret: a client
// without the secret cannot name (read, overwrite or delete) any of them. The store listens on a port rank 0
// binds itself (port 0: the kernel picks one that is free) and publishes in a file every rank can read.
#pragma once

#include <chrono>
#include <string>

#include "contract/status.h"

namespace slipway::dist {

// The environment that carries the secret to every rank (set by `launch` and the sbatch script; never written
// to run.json or a log).
inline constexpr const char* kSecretVariable = "SLIPWAY_RDZV_SECRET";
// Where rank 0 publishes the port when MASTER_PORT is not given (a file every rank can read).
inline constexpr const char* kPortFileVariable = "SLIPWAY_RDZV_FILE";
inline constexpr size_t kMinSecretLength = 16;

// 32 hex digits from /dev/urandom.
Result<std::string> new_rendezvous_secret();

// The prefix (a c10d::PrefixStore's) of every store key of the job holding `secret`: "slipway/" + 32 hex
// digits, a hash of the secret, so the secret itself never crosses the network.
std::string store_prefix(const std::string& secret);

// Writes "<port> <tag>" to `path` (0600, atomically by rename). The tag binds the port to the secret and to
// `scope` (the Slurm job and step): a rank ignores a file left by an earlier step or by another secret.
Status publish_port(const std::string& path, const std::string& secret, const std::string& scope, int port);

// Polls `path` until it holds a port published with this secret and scope. The error names the file and
// says what a rank can do about it.
Result<int> wait_for_published_port(const std::string& path, const std::string& secret,
                                    const std::string& scope, std::chrono::milliseconds timeout);

}  // namespace slipway::dist
