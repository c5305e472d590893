// ~/.ssh/config as OpenSSH reads it, for the options Slipway needs (HostName, User, Port, IdentityFile,
// ProxyJump, ProxyCommand, UserKnownHostsFile; other keywords are ignored as OpenSSH-only), and the merge of
// a profile's explicit ConnectOptions with it into the one target a Session connects to.
//
// Host blocks, `Match all|host|originalhost` (also negated with !) and `Include` (relative to ~/.ssh, globs,
// nested up to 16 files deep, an Include inside a block applying only where that block does) are applied.
// Match criteria Slipway cannot evaluate (exec, user, localuser, canonical, final, localnetwork, tagged)
// are parsed; a lookup for a host that such a block may apply to fails naming file:line, rather than
// connect with settings OpenSSH would not use.
//
// Why our own parser and not libssh's ssh_options_parse_config (0.10, which does handle Include and Match,
// exec included): it applies the config straight into one session and gives back only a few values
// (ssh_options_get: host, user, the first identity, ProxyCommand), while Slipway shows a profile's resolved
// user, port, keys and ProxyJump hops and opens the hops itself over direct-tcpip; and libssh 0.10 turns
// ProxyJump into a ProxyCommand that runs the OpenSSH binary ("ssh -l j -p 2 -W '[%h]:%p' bastion", checked
// here), which a machine without an ssh client lacks. So libssh is told not to read any config
// (SSH_OPTIONS_PROCESS_CONFIG off) and gets the resolved values.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "contract/status.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

// One criterion of a Match line: "host a,b", "!originalhost c", "all", "exec \"cmd\"".
struct SshMatchCriterion {
    std::string keyword;   // lower-case; all, host and originalhost are evaluated, the others refuse a lookup
    std::string argument;  // the pattern list (or command, user...); empty for all, canonical, final
    bool negated = false;
};

// One "Keyword value" line (keyword lower-cased).
struct SshConfigOption {
    std::string keyword;
    std::string value;
    int line = 0;
};

// One `Host` or `Match` block (or the lines before the first, pattern "*"): its condition and its
// option lines in file order.
struct SshConfigBlock {
    std::vector<std::string> patterns;     // Host: "*.cluster", "!bastion", "login?" ...; empty for Match
    std::vector<SshMatchCriterion> match;  // Match: all must hold; empty for Host
    std::vector<SshConfigOption> options;
    std::string file;
    int line = 0;
    // The block whose Include line read this one's file (-1: the top file). A block from an included file
    // applies only when that block does, as in OpenSSH.
    int included_from = -1;
};

// What the config file says for one host, before tokens (%h, ~) are expanded. First value wins, as in
// OpenSSH, except IdentityFile, which accumulates. ProxyJump and ProxyCommand exclude each other: the
// first one seen wins.
struct SshHostConfig {
    std::string hostname;
    int port = 0;
    std::string user;
    std::vector<std::string> identity_files;
    std::string proxy_jump;
    std::string proxy_command;        // the whole value, for /bin/sh -c; "none" disables
    std::string proxy_command_where;  // "file:line" of the ProxyCommand, for messages
    std::string user_known_hosts_file;
};

struct SshConfig {
    std::string file;                    // for messages
    std::vector<SshConfigBlock> blocks;  // in the order OpenSSH reads them, included files in place

    // Fails (naming file:line) when a Match block whose criteria Slipway cannot evaluate may apply.
    Result<SshHostConfig> lookup(const std::string& host) const;
};

// Parses config text; errors name the file and line (e.g. "~/.ssh/config:12: Port 'abc' is not a number").
// `home` is where `~` and relative Include paths (home/.ssh/...) point; empty: such an Include is an error.
Result<SshConfig> parse_ssh_config(const std::string& text, const std::string& file_name,
                                   const std::string& home = "");
// Reads and parses a file; a file that does not exist is an empty config.
Result<SshConfig> load_ssh_config(const std::string& path, const std::string& home);

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
    // ProxyCommand from the config, tokens expanded (%h %p %r %n %d %u %%): libssh runs it with /bin/sh -c
    // and speaks SSH over its stdin/stdout. Empty: none. Never together with jumps.
    std::string proxy_command;
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
