// ~/.ssh/config as OpenSSH reads it, for the options Slipway needs (HostName, User, Port, IdentityFile,
// ProxyJump, UserKnownHostsFile; other keywords are ignored as OpenSSH-only), and the merge of a profile's
// explicit ConnectOptions with it into the one target a Session connects to.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "contract/status.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

// One `Host` block: its patterns and its "Keyword value" lines in file order (keywords lower-cased).
struct SshConfigBlock {
    std::vector<std::string> patterns;  // "*.cluster", "!bastion", "login?" ...
    std::vector<std::pair<std::string, std::string>> options;
    int line = 0;
};

// What the config file says for one host, before tokens (%h, ~) are expanded. First value wins, as in
// OpenSSH, except IdentityFile, which accumulates.
struct SshHostConfig {
    std::string hostname;
    int port = 0;
    std::string user;
    std::vector<std::string> identity_files;
    std::string proxy_jump;
    std::string user_known_hosts_file;
};

struct SshConfig {
    std::string file;                    // for messages
    std::vector<SshConfigBlock> blocks;  // options before the first Host line form a block with pattern "*"
    std::vector<std::string>
        warnings;  // keywords or blocks Slipway does not apply (Match, Include), with lines

    SshHostConfig lookup(const std::string& host) const;
};

// Parses config text; errors name the file and line (e.g. "~/.ssh/config:12: Port 'abc' is not a number").
Result<SshConfig> parse_ssh_config(const std::string& text, const std::string& file_name);
// Reads and parses a file; a file that does not exist is an empty config.
Result<SshConfig> load_ssh_config(const std::string& path);

// OpenSSH pattern list matching: comma-separated patterns with * and ?, a leading ! negates (a negated
// match rejects the host whatever else matches).
bool ssh_host_matches(const std::vector<std::string>& patterns, const std::string& host);

// One hop of a ProxyJump list: "[user@]host[:port]" or "ssh://[user@]host[:port]".
struct JumpHost {
    std::string user;
    std::string host;
    int port = 0;
};
Result<std::vector<JumpHost>> parse_proxy_jump(const std::string& value);

// The fully resolved destination: explicit ConnectOptions fields win over the config, then defaults.
struct SshTarget {
    std::string alias;     // what the user named (for messages and known_hosts questions)
    std::string hostname;  // what is connected to
    int port = 22;
    std::string user;
    std::vector<std::string> identity_files;  // expanded paths; may not exist
    std::vector<JumpHost> jumps;              // outermost first
    std::string known_hosts_file;
    std::chrono::milliseconds connect_timeout{10000};
    std::chrono::seconds keepalive_interval{30};
};

// `home` and `local_user` make the result testable; ssh_target_for() fills them from the environment.
Result<SshTarget> resolve_ssh_target(const ConnectOptions& options, const SshConfig& config,
                                     const std::string& home, const std::string& local_user);

// The local user's home folder and name (HOME / getpwuid).
std::string local_home_dir();
std::string local_user_name();

}  // namespace slipway::remote
