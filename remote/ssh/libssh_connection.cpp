// Connect, verify the host key and authenticate one libssh session (see libssh_connection.h).
#include "remote/ssh/libssh_connection.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>

namespace slipway::remote {
namespace {

// Overwrites a secret before its memory is released (the compiler may not drop a volatile write).
void wipe(std::string& secret) {
    volatile char* p = secret.data();
    for (std::size_t i = 0; i < secret.size(); ++i)
        p[i] = 0;
    secret.clear();
}

std::string libssh_error(ssh_session session) {
    return ssh_get_error(session);
}

// How known_hosts names the host: "host" on port 22, "[host]:port" otherwise.
std::string known_hosts_name(const SshTarget& target) {
    return target.port == 22 ? target.hostname : "[" + target.hostname + "]:" + std::to_string(target.port);
}

// The fingerprints that known_hosts holds for `host` with keys of `type` (libssh does not return the old key
// of a CHANGED host), comma-separated.
std::string known_fingerprints(const std::string& known_hosts_file, const std::string& host,
                               ssh_keytypes_e type) {
    std::ifstream in(known_hosts_file);
    std::string line;
    std::string fingerprints;
    while (std::getline(in, line)) {
        ssh_knownhosts_entry* entry = nullptr;
        // Matches plain and hashed (|1|...) host fields; a line for another host yields no entry.
        if (ssh_known_hosts_parse_line(host.c_str(), line.c_str(), &entry) == SSH_OK && entry != nullptr) {
            if (ssh_key_type(entry->publickey) == type) {
                fingerprints += (fingerprints.empty() ? "" : ", ") + sha256_fingerprint(entry->publickey);
            }
        }
        SSH_KNOWNHOSTS_ENTRY_FREE(entry);
    }
    return fingerprints.empty() ? "(unreadable)" : fingerprints;
}

Status verify_host_key(ssh_session session, const SshTarget& target, const std::string& name,
                       const SessionCallbacks& callbacks, std::set<std::string>& accepted_once) {
    ssh_key server_key = nullptr;
    if (ssh_get_server_publickey(session, &server_key) != SSH_OK) {
        return Status::Error(StatusCode::kUnavailable,
                             name + ": no host key from the server: " + libssh_error(session));
    }
    const std::string fingerprint = sha256_fingerprint(server_key);
    const std::string key_type = ssh_key_type_to_char(ssh_key_type(server_key));
    struct KeyGuard {
        ssh_key key;
        ~KeyGuard() { ssh_key_free(key); }
    } key_guard{server_key};
    const std::string host = known_hosts_name(target);

    switch (ssh_session_is_known_server(session)) {
        case SSH_KNOWN_HOSTS_OK:
            return Status::Ok();
        case SSH_KNOWN_HOSTS_CHANGED: {
            const std::string known =
                known_fingerprints(target.known_hosts_file, host, ssh_key_type(server_key));
            return Status::Error(
                StatusCode::kHostKeyRejected,
                "HOST KEY CHANGED for " + host + ": " + target.known_hosts_file + " has " + known +
                    ", the server offers " + fingerprint + " (" + key_type +
                    "). Refusing to connect: this can be an attack. If the host was reinstalled, "
                    "remove the old entry (ssh-keygen -R '" +
                    host + "' -f " + target.known_hosts_file + ") and connect again.");
        }
        case SSH_KNOWN_HOSTS_OTHER:
            return Status::Error(StatusCode::kHostKeyRejected,
                                 "host key for " + host + " is a " + key_type + " key " + fingerprint +
                                     ", but " + target.known_hosts_file +
                                     " holds a key of another type for this host. Refusing to connect.");
        case SSH_KNOWN_HOSTS_NOT_FOUND:
        case SSH_KNOWN_HOSTS_UNKNOWN:
            break;
        case SSH_KNOWN_HOSTS_ERROR:
        default:
            return Status::Error(StatusCode::kHostKeyRejected, "cannot check the host key of " + host +
                                                                   " against " + target.known_hosts_file +
                                                                   ": " + libssh_error(session));
    }

    // "Once" is a decision about this host and this key: the same key on another host (or port) asks again.
    const std::string accepted_key = host + " " + fingerprint;
    if (accepted_once.count(accepted_key) > 0) return Status::Ok();
    const HostKeyInfo info{host, target.port, key_type, fingerprint, target.known_hosts_file};
    const HostKeyDecision decision =
        callbacks.unknown_host_key ? callbacks.unknown_host_key(info) : HostKeyDecision::kReject;
    switch (decision) {
        case HostKeyDecision::kReject:
            return Status::Error(StatusCode::kHostKeyRejected,
                                 "host key of " + host + " (" + key_type + " " + fingerprint +
                                     ") is not in " + target.known_hosts_file + " and was not accepted");
        case HostKeyDecision::kAcceptOnce:
            accepted_once.insert(accepted_key);
            return Status::Ok();
        case HostKeyDecision::kAcceptAndSave: {
            std::error_code ec;
            const auto folder = std::filesystem::path(target.known_hosts_file).parent_path();
            if (!folder.empty() && !std::filesystem::exists(folder, ec)) {
                std::filesystem::create_directories(folder, ec);
                if (!ec) std::filesystem::permissions(folder, std::filesystem::perms::owner_all, ec);
            }
            if (ssh_session_update_known_hosts(session) != SSH_OK) {
                return Status::Error("cannot add the host key of " + host + " to " + target.known_hosts_file +
                                     ": " + libssh_error(session));
            }
            accepted_once.insert(accepted_key);
            return Status::Ok();
        }
    }
    return Status::Error(StatusCode::kHostKeyRejected, "host key of " + host + ": no decision");
}

// libssh asks for a key's passphrase through this; it forwards to SessionCallbacks::passphrase.
struct PassphraseRequest {
    const SessionCallbacks* callbacks;
    std::string key_file;
    bool asked = false;
    bool cancelled = false;
};

int passphrase_callback(const char* /*prompt*/, char* buf, size_t len, int /*echo*/, int /*verify*/,
                        void* userdata) {
    auto* request = static_cast<PassphraseRequest*>(userdata);
    request->asked = true;
    if (!request->callbacks->passphrase) {
        request->cancelled = true;
        return -1;
    }
    std::optional<std::string> answer = request->callbacks->passphrase(request->key_file);
    if (!answer || answer->size() + 1 > len) {
        request->cancelled = true;
        if (answer) wipe(*answer);
        return -1;
    }
    std::memcpy(buf, answer->c_str(), answer->size() + 1);
    wipe(*answer);
    return 0;
}

bool readable_file(const std::string& path) {
    return ::access(path.c_str(), R_OK) == 0;
}

// Tries one key file: asks the server whether it would take the public key (when a .pub is there) before
// any passphrase is asked, then signs with the private key.
int try_key_file(ssh_session session, const std::string& path, const SessionCallbacks& callbacks,
                 std::string* note) {
    if (readable_file(path + ".pub")) {
        ssh_key pub = nullptr;
        if (ssh_pki_import_pubkey_file((path + ".pub").c_str(), &pub) == SSH_OK) {
            const int offered = ssh_userauth_try_publickey(session, nullptr, pub);
            ssh_key_free(pub);
            if (offered != SSH_AUTH_SUCCESS) {
                *note = path + " (not accepted)";
                return offered == SSH_AUTH_ERROR ? SSH_AUTH_ERROR : SSH_AUTH_DENIED;
            }
        }
    }
    for (int attempt = 0; attempt < 3; ++attempt) {
        PassphraseRequest request{&callbacks, path};
        ssh_key key = nullptr;
        const int imported =
            ssh_pki_import_privkey_file(path.c_str(), nullptr, passphrase_callback, &request, &key);
        if (imported != SSH_OK) {
            if (request.asked && !request.cancelled) continue;  // a wrong passphrase: ask again
            *note = path + (request.cancelled ? " (passphrase not given)" : " (cannot read the private key)");
            return SSH_AUTH_DENIED;
        }
        const int rc = ssh_userauth_publickey(session, nullptr, key);
        ssh_key_free(key);
        *note = path + (rc == SSH_AUTH_SUCCESS ? "" : " (rejected)");
        return rc;
    }
    *note = path + " (wrong passphrase)";
    return SSH_AUTH_DENIED;
}

int keyboard_interactive(ssh_session session, const SessionCallbacks& callbacks) {
    int rc = ssh_userauth_kbdint(session, nullptr, nullptr);
    while (rc == SSH_AUTH_INFO) {
        const std::string name = ssh_userauth_kbdint_getname(session);
        const std::string instruction = ssh_userauth_kbdint_getinstruction(session);
        const int count = ssh_userauth_kbdint_getnprompts(session);
        std::vector<InteractivePrompt> prompts;
        for (int i = 0; i < count; ++i) {
            char echo = 0;
            const char* text = ssh_userauth_kbdint_getprompt(session, i, &echo);
            prompts.push_back({text != nullptr ? text : "", echo != 0});
        }
        std::optional<std::vector<std::string>> answers;
        if (count > 0) {
            answers = callbacks.keyboard_interactive(name, instruction, prompts);
            if (!answers || answers->size() != prompts.size()) {
                if (answers)
                    for (auto& a : *answers)
                        wipe(a);
                return SSH_AUTH_DENIED;
            }
            for (int i = 0; i < count; ++i) {
                ssh_userauth_kbdint_setanswer(session, i, (*answers)[i].c_str());
                wipe((*answers)[i]);
            }
        }
        rc = ssh_userauth_kbdint(session, nullptr, nullptr);
    }
    return rc;
}

std::string method_names(int methods) {
    std::string names;
    auto add = [&](int bit, const char* name) {
        if (methods & bit) names += (names.empty() ? "" : ",") + std::string(name);
    };
    add(SSH_AUTH_METHOD_PUBLICKEY, "publickey");
    add(SSH_AUTH_METHOD_INTERACTIVE, "keyboard-interactive");
    add(SSH_AUTH_METHOD_PASSWORD, "password");
    add(SSH_AUTH_METHOD_GSSAPI_MIC, "gssapi");
    add(SSH_AUTH_METHOD_HOSTBASED, "hostbased");
    return names.empty() ? "none" : names;
}

// Where the publickey method stands: what is left to offer, so a second publickey step of a multi-step
// chain (AuthenticationMethods publickey,publickey) goes on with the next key instead of the same one.
struct PublickeyProgress {
    bool agent_tried = false;
    std::size_t next_identity = 0;
};

// Offers ssh-agent keys, then the identity files not offered yet, until one is accepted fully or partially.
// *used names what gave that answer.
int publickey_step(ssh_session session, const SshTarget& target, bool use_agent,
                   const SessionCallbacks& callbacks, PublickeyProgress& progress,
                   const std::function<void(const std::string&)>& note, std::string* used) {
    if (!progress.agent_tried) {
        progress.agent_tried = true;
        const char* agent = std::getenv("SSH_AUTH_SOCK");
        if (use_agent && agent != nullptr && *agent != '\0') {
            const int rc = ssh_userauth_agent(session, nullptr);
            *used = "ssh-agent";
            if (rc == SSH_AUTH_SUCCESS || rc == SSH_AUTH_PARTIAL || rc == SSH_AUTH_ERROR) return rc;
            note("ssh-agent");
        }
    }
    while (progress.next_identity < target.identity_files.size()) {
        const std::string& path = target.identity_files[progress.next_identity++];
        if (!readable_file(path)) continue;
        std::string key_note;
        const int rc = try_key_file(session, path, callbacks, &key_note);
        *used = "key " + key_note;
        if (rc == SSH_AUTH_SUCCESS || rc == SSH_AUTH_PARTIAL || rc == SSH_AUTH_ERROR) return rc;
        note(*used);
    }
    return SSH_AUTH_DENIED;
}

// Runs the methods the server lists: each key once, keyboard-interactive and password once per step. A
// partial success (one factor of AuthenticationMethods publickey,keyboard-interactive or publickey,password
// accepted) re-reads the list the server sends with it and goes on with the methods still needed.
Status authenticate(ssh_session session, const SshTarget& target, const std::string& name, bool use_agent,
                    const SessionCallbacks& callbacks) {
    int rc = ssh_userauth_none(session, nullptr);
    // sshd sends its Banner in answer to the first authentication request.
    if (char* banner = ssh_get_issue_banner(session); banner != nullptr) {
        if (callbacks.banner) callbacks.banner(banner);
        ssh_string_free_char(banner);
    }
    if (rc == SSH_AUTH_SUCCESS) return Status::Ok();
    if (rc == SSH_AUTH_ERROR) {
        return Status::Error(StatusCode::kUnavailable,
                             name + ": authentication failed: " + libssh_error(session));
    }
    const int first_methods = ssh_userauth_list(session, nullptr);
    int methods = first_methods;
    std::string tried;
    std::string partial;
    auto note = [&](const std::string& what) { tried += (tried.empty() ? "" : "; ") + what; };
    PublickeyProgress publickey;
    bool kbdint_tried = false;
    bool password_tried = false;
    // 2FA chains have two or three steps; a server answering "partial" for ever must not keep us prompting.
    constexpr int kMaxPartialSteps = 8;
    int partial_steps = 0;

    while (rc != SSH_AUTH_ERROR && ssh_is_connected(session)) {
        std::string used;
        if ((methods & SSH_AUTH_METHOD_PUBLICKEY) &&
            (!publickey.agent_tried || publickey.next_identity < target.identity_files.size())) {
            rc = publickey_step(session, target, use_agent, callbacks, publickey, note, &used);
            if (rc == SSH_AUTH_DENIED) continue;  // every key offered; the next pass tries other methods
        } else if ((methods & SSH_AUTH_METHOD_INTERACTIVE) && callbacks.keyboard_interactive &&
                   !kbdint_tried) {
            kbdint_tried = true;
            used = "keyboard-interactive";
            rc = keyboard_interactive(session, callbacks);
        } else if ((methods & SSH_AUTH_METHOD_PASSWORD) && callbacks.password && !password_tried) {
            password_tried = true;
            used = "password";
            std::optional<std::string> password = callbacks.password(target.user, target.hostname);
            rc = SSH_AUTH_DENIED;
            if (password) {
                rc = ssh_userauth_password(session, nullptr, password->c_str());
                wipe(*password);
            } else {
                used = "password (not given)";
            }
        } else {
            break;  // nothing left that this client can offer
        }
        if (rc == SSH_AUTH_SUCCESS) return Status::Ok();
        if (rc == SSH_AUTH_PARTIAL) {
            partial += (partial.empty() ? "" : ", ") + used;
            if (++partial_steps > kMaxPartialSteps) {
                note("stopped after " + std::to_string(kMaxPartialSteps) + " partial successes");
                break;
            }
            methods = ssh_userauth_list(session, nullptr);
            // A new step: the server may ask for a prompt-based method again (e.g. PAM stacking two
            // keyboard-interactive rounds).
            kbdint_tried = false;
            password_tried = false;
            continue;
        }
        note(used);
    }
    std::string accepts = method_names(first_methods);
    if (!partial.empty())
        accepts += "; partial success: " + partial + "; then still needed: " + method_names(methods);
    return Status::Error(StatusCode::kAuthFailed,
                         "authentication failed for user '" + target.user + "' on " + target.hostname + ":" +
                             std::to_string(target.port) + " (server accepts: " + accepts +
                             "; tried: " + (tried.empty() ? "nothing usable" : tried) + ")");
}

}  // namespace

std::string sha256_fingerprint(ssh_key key) {
    unsigned char* hash = nullptr;
    size_t length = 0;
    if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &length) != SSH_OK) return "SHA256:?";
    char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, length);
    ssh_clean_pubkey_hash(&hash);
    std::string fingerprint = text != nullptr ? text : "SHA256:?";
    ssh_string_free_char(text);
    return fingerprint;
}

Result<std::unique_ptr<LibsshConnection>> LibsshConnection::open(const SshTarget& target, int socket_fd,
                                                                 bool use_agent,
                                                                 const SessionCallbacks& callbacks,
                                                                 std::set<std::string>& accepted_once) {
    static std::once_flag init_once;
    std::call_once(init_once, [] { ssh_init(); });

    const std::string name = target.user + "@" + target.hostname + ":" + std::to_string(target.port);
    ssh_session session = ssh_new();
    if (session == nullptr) return Result<std::unique_ptr<LibsshConnection>>::Error(name + ": out of memory");
    std::unique_ptr<LibsshConnection> connection(new LibsshConnection(session, name));

    const long timeout_s = static_cast<long>(target.connect_timeout.count() / 1000);
    const long timeout_us = static_cast<long>((target.connect_timeout.count() % 1000) * 1000);
    const int port = target.port;
    const int no = 0;
    const int yes = 1;
    bool options_ok =
        ssh_options_set(session, SSH_OPTIONS_HOST, target.hostname.c_str()) == SSH_OK &&
        ssh_options_set(session, SSH_OPTIONS_PORT, &port) == SSH_OK &&
        ssh_options_set(session, SSH_OPTIONS_USER, target.user.c_str()) == SSH_OK &&
        ssh_options_set(session, SSH_OPTIONS_KNOWNHOSTS, target.known_hosts_file.c_str()) == SSH_OK &&
        ssh_options_set(session, SSH_OPTIONS_TIMEOUT, &timeout_s) == SSH_OK &&
        ssh_options_set(session, SSH_OPTIONS_TIMEOUT_USEC, &timeout_us) == SSH_OK &&
        // We resolved ~/.ssh/config ourselves; libssh must not apply it a second time.
        ssh_options_set(session, SSH_OPTIONS_PROCESS_CONFIG, &no) == SSH_OK &&
        ssh_options_set(session, SSH_OPTIONS_NODELAY, &yes) == SSH_OK;
    if (options_ok && socket_fd >= 0) {
        socket_t fd = socket_fd;
        options_ok = ssh_options_set(session, SSH_OPTIONS_FD, &fd) == SSH_OK;
    } else if (options_ok && !target.proxy_command.empty()) {
        // libssh runs it with /bin/sh -c, as OpenSSH does. Our tokens are already expanded; libssh expands
        // % escapes once more, so a literal % is doubled.
        std::string command;
        for (const char c : target.proxy_command)
            command += c == '%' ? std::string("%%") : std::string(1, c);
        options_ok = ssh_options_set(session, SSH_OPTIONS_PROXYCOMMAND, command.c_str()) == SSH_OK;
    }
    if (!options_ok) {
        return Result<std::unique_ptr<LibsshConnection>>::Error(
            name + ": invalid ssh option: " + libssh_error(session));
    }
    if (ssh_connect(session) != SSH_OK) {
        const std::string error = libssh_error(session);
        const bool timed_out = error.find("imeout") != std::string::npos;
        const std::string through = socket_fd < 0 && !target.proxy_command.empty()
                                        ? " through ProxyCommand '" + target.proxy_command + "'"
                                        : "";
        return Result<std::unique_ptr<LibsshConnection>>::Error(
            timed_out ? StatusCode::kTimeout : StatusCode::kUnavailable,
            "cannot connect to " + name + through + ": " + error);
    }
    if (Status s = verify_host_key(session, target, name, callbacks, accepted_once); !s) return s;
    if (Status s = authenticate(session, target, name, use_agent, callbacks); !s) return s;
    return connection;
}

LibsshConnection::~LibsshConnection() {
    if (session_ != nullptr) {
        if (ssh_is_connected(session_)) ssh_disconnect(session_);
        ssh_free(session_);
    }
}

}  // namespace slipway::remote
