// The Session seam: everything Slipway does on a login node (commands, SFTP, log reads) goes through this
// interface, so Slurm, deployment and log following are written once and tested with FakeSession.
// Header-only and free of libssh; the libssh implementation is in libssh_session.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contract/status.h"

namespace slipway::remote {

// What a remote command printed and how it ended. exit_status is the remote process's exit code
// (-1 when the server reported none, e.g. the command was killed by a signal).
struct ExecResult {
    std::string out;
    std::string err;
    int exit_status = -1;
};

// A remote path's metadata; exists=false (and nothing else set) when the path does not exist.
struct RemoteStat {
    bool exists = false;
    std::uint64_t size = 0;
    std::int64_t mtime = 0;  // seconds since the epoch
    std::uint32_t mode = 0;  // permission bits only (e.g. 0755)
    bool is_dir = false;
};

// What a folder entry is. Links are reported as links (not followed): stat() the entry to see what a link
// points to.
enum class RemoteEntryType { kFile, kDirectory, kSymlink, kOther };

// One entry of a remote folder listing.
struct RemoteDirEntry {
    std::string name;  // the entry's own name, byte for byte (any character but '/' and NUL)
    RemoteEntryType type = RemoteEntryType::kOther;
    std::uint64_t size = 0;
    std::uint32_t mode = 0;  // permission bits only (e.g. 0644)
    std::int64_t mtime = 0;  // seconds since the epoch
};

// A command started by Session::start_process() that runs while its caller talks to it: its stdin is
// written as the caller goes, its stdout and stderr are read as they arrive (the app's chat streams
// tokens from `srun ... slipway-engine generate` this way, so nothing on the cluster listens on a port).
// Every call takes the session's lock only for a short step (a read waits in slices of at most 50 ms), so
// a process that runs for minutes never holds up the session's other calls for long. Calls may come from
// any thread, one at a time; the object may outlive its Session: once the Session is gone or its
// connection lost, the calls fail with StatusCode::kUnavailable. The destructor ends the command as
// terminate() does.
class RemoteProcess {
public:
    virtual ~RemoteProcess() = default;

    // Sends bytes to the command's stdin (all of them, or an error).
    [[nodiscard]] virtual Status write_stdin(const std::string& bytes) = 0;
    // The command sees end-of-file on its stdin; it keeps running and its output can still be read.
    [[nodiscard]] virtual Status close_stdin() = 0;
    // What the command wrote since the last call: waits up to `timeout` for the first bytes (0: no wait),
    // then returns what is there. Empty out and err with exited() false: nothing yet.
    struct Output {
        std::string out;
        std::string err;
    };
    [[nodiscard]] virtual Result<Output> read_available(std::chrono::milliseconds timeout) = 0;
    // True once the command ended and all its output was returned by read_available().
    virtual bool exited() const = 0;
    // The command's exit code once exited(); -1 when the server gave none (killed by a signal) or not yet.
    virtual int exit_status() const = 0;
    // Asks the server to send the command SIGTERM, then closes the channel (its pipes close too). Ok also
    // when it had ended already.
    [[nodiscard]] virtual Status terminate() = 0;
};

// The user's answer about a host key that is not in known_hosts.
enum class HostKeyDecision { kReject, kAcceptOnce, kAcceptAndSave };

// What a person needs to decide about an unknown host key.
struct HostKeyInfo {
    std::string host;  // as known_hosts names it: "host" or "[host]:port"
    int port = 22;
    std::string key_type;            // e.g. "ssh-ed25519"
    std::string sha256_fingerprint;  // "SHA256:..." as `ssh-keygen -lf` prints it
    std::string known_hosts_file;    // where "accept and save" writes
};

// One keyboard-interactive prompt (e.g. "Verification code: "); echo=false for secrets. The text, like the
// name and instruction, comes from the server: show it through printable_prompt_text() (prompt_text.h).
struct InteractivePrompt {
    std::string text;
    bool echo = false;
};

// How the session asks a person for decisions and secrets. Each callback may be empty: the session then
// answers "no" (reject the key, skip that auth method). A callback returning nullopt means "cancelled".
// Secrets returned here are used once and never stored by the session.
struct SessionCallbacks {
    std::function<HostKeyDecision(const HostKeyInfo&)> unknown_host_key;
    // key_file: the private key that needs a passphrase.
    std::function<std::optional<std::string>(const std::string& key_file)> passphrase;
    // name/instruction from the server; one answer per prompt, in order.
    std::function<std::optional<std::vector<std::string>>(const std::string& name,
                                                          const std::string& instruction,
                                                          const std::vector<InteractivePrompt>& prompts)>
        keyboard_interactive;
    std::function<std::optional<std::string>(const std::string& user, const std::string& host)> password;
    // The server's pre-login banner (sshd's Banner: a site's usage policy), once per connection when it
    // sends one. Server text: show it only through printable_prompt_text() (prompt_text.h).
    std::function<void(const std::string& text)> banner;
};

// Where and how to connect. Empty/zero fields are filled from the ssh config file (Host blocks matching
// `host`), then from defaults (port 22, the local user name, ~/.ssh/id_* keys).
struct ConnectOptions {
    std::string host;  // a Host alias from the ssh config, a host name or an address
    int port = 0;
    std::string user;
    std::vector<std::string> identity_files;
    // "[user@]host[:port]" (comma-separated for a chain): wins over the config's ProxyJump and ProxyCommand;
    // "none" turns off the config's ProxyJump (a ProxyCommand from the config still applies).
    std::string proxy_jump;
    std::string known_hosts_file;  // empty: ~/.ssh/known_hosts
    std::string ssh_config_file;   // empty: ~/.ssh/config (if it exists); "none": read no config
    bool use_agent = true;         // try keys held by ssh-agent (SSH_AUTH_SOCK) first
    std::chrono::milliseconds connect_timeout{10000};
    std::chrono::seconds keepalive_interval{30};  // 0: no keepalive
};

// One connection to one host. A libssh session is not thread-safe, so LibsshSession serializes every call
// (and its keepalive) with a mutex: calls from several threads are safe but wait for each other, so the
// app gives each cluster's Session to one worker. FakeSession is for single-threaded tests. Every call
// that needs the connection fails with StatusCode::kUnavailable once it is lost; reconnect() opens a new
// one with the same options.
class Session {
public:
    virtual ~Session() = default;

    // "user@host:port" for messages.
    virtual std::string describe() const = 0;
    virtual bool is_connected() const = 0;
    virtual Status reconnect() = 0;
    virtual void disconnect() = 0;

    // Runs `command` in the remote user's shell. The command is passed verbatim: build it with
    // shell_quote()/shell_command() (shell_quote.h) from anything that is not a constant. A command that
    // has not finished after `timeout` fails with StatusCode::kTimeout (its channel is closed).
    virtual Result<ExecResult> exec(const std::string& command, std::chrono::milliseconds timeout) = 0;

    // Starts `command` (verbatim, as exec() runs it) and returns at once: see RemoteProcess. Fails with
    // kUnavailable when not connected, kError when the server refuses the command.
    [[nodiscard]] virtual Result<std::unique_ptr<RemoteProcess>> start_process(
        const std::string& command) = 0;

    // Remote paths for the SFTP calls below: absolute, relative to the login folder, or "~/..." (the login
    // folder; SFTP itself has no ~).
    // Writes to a temporary name in the same folder, sets `mode`, then renames over `remote`, so a reader
    // never sees a partial file.
    virtual Status upload_file(const std::string& local, const std::string& remote, std::uint32_t mode) = 0;
    virtual Status upload_bytes(const std::string& bytes, const std::string& remote, std::uint32_t mode) = 0;
    virtual Status download_file(const std::string& remote, const std::string& local) = 0;

    // Up to max_bytes from byte `offset` (fewer at the end of the file, empty at or past it). A missing file
    // fails with StatusCode::kNotFound (a pending job's log does not exist yet).
    virtual Result<std::string> read_range(const std::string& remote, std::uint64_t offset,
                                           std::size_t max_bytes) = 0;
    // exists=false for a missing path (not an error).
    virtual Result<RemoteStat> stat(const std::string& remote) = 0;
    // The entries of folder `remote` (without "." and ".."), sorted by name. Names travel over SFTP, not a
    // shell, so any name arrives intact. A missing folder fails with kNotFound, a path that is not a folder
    // with kError; both messages name the path.
    virtual Result<std::vector<RemoteDirEntry>> list_directory(const std::string& remote) = 0;
    // Creates the folder and its missing parents; an existing folder is fine.
    virtual Status mkdir_p(const std::string& remote, std::uint32_t mode = 0755) = 0;
    // Removes a file or an empty folder; a missing path is fine.
    virtual Status remove(const std::string& remote) = 0;
};

}  // namespace slipway::remote
