// The libssh Session against an in-process SSH server built on libssh's server API, for what the test
// sshd cannot offer without PAM: keyboard-interactive (2FA-style prompts through the callback), a
// password accepted through the password callback, and the multi-step chains of AuthenticationMethods
// (publickey then keyboard-interactive or password, with a partial success between); plus a connect
// timeout against a listener that never speaks SSH. Needs ssh-keygen (openssh-client) for the server's host
// key; skips without it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <libssh/libssh.h>
#include <libssh/server.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "remote/ssh/libssh_session.h"
#include "remote/ssh/prompt_text.h"

namespace slipway::remote {
namespace {

std::string text(const char* maybe_null) {
    return maybe_null != nullptr ? maybe_null : "";
}

// A listening TCP socket on 127.0.0.1 with a kernel-chosen port.
int listen_on_loopback(int* port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 4) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        ::close(fd);
        return -1;
    }
    *port = ntohs(address.sin_port);
    return fd;
}

// The pre-login banner every test server sends, with a "clear screen" escape a client must not pass on.
constexpr const char* kBanner = "Authorized use only.\x1b[2J\n";

// One-connection SSH server. `chain` lists the authentication steps the client must pass in order, as
// sshd's AuthenticationMethods does: each step offers one method (or several, any of which passes it),
// and every step but the last answers with a partial success. Keyboard-interactive asks "Password: " and
// "Verification code: " and wants `password` + `code`, or, when `password` is empty, asks only
// "Verification code: "; password auth wants `password`; publickey wants the client key this server
// generates (options() offers it). Records what the client sent.
class TestSshServer {
public:
    TestSshServer(int methods, std::string password, std::string code)
        : TestSshServer(std::vector<int>{methods}, std::move(password), std::move(code)) {}
    TestSshServer(std::vector<int> chain, std::string password, std::string code)
        : chain_(std::move(chain)), password_(std::move(password)), code_(std::move(code)) {
        dir_ = std::filesystem::temp_directory_path() /
               ("slipway-sshserver-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
        std::filesystem::create_directories(dir_);
        host_key_ = (dir_ / "host_key").string();
        client_key_ = (dir_ / "client_key").string();
        const std::string keygen = "ssh-keygen -q -t ed25519 -N '' -f " + host_key_ + " >/dev/null 2>&1 && " +
                                   "ssh-keygen -q -t ed25519 -N '' -f " + client_key_ + " >/dev/null 2>&1";
        ready_ = std::system(keygen.c_str()) == 0 &&
                 ssh_pki_import_pubkey_file((client_key_ + ".pub").c_str(), &client_public_key_) == SSH_OK;
        listen_fd_ = ready_ ? listen_on_loopback(&port_) : -1;
        ready_ = ready_ && listen_fd_ >= 0;
        if (ready_) {
            std::ifstream pub(host_key_ + ".pub");
            std::string type, key;
            pub >> type >> key;
            std::ofstream(known_hosts()) << "[127.0.0.1]:" << port_ << " " << type << " " << key << "\n";
            thread_ = std::thread([this] { serve(); });
        }
    }
    ~TestSshServer() {
        if (thread_.joinable()) thread_.join();
        if (listen_fd_ >= 0) ::close(listen_fd_);
        ssh_key_free(client_public_key_);
        std::filesystem::remove_all(dir_);
    }

    bool ready() const { return ready_; }
    int port() const { return port_; }
    std::string known_hosts() const { return (dir_ / "known_hosts").string(); }
    std::string user_seen() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return user_;
    }
    // How many steps of the chain the client passed (chain.size() after a full login).
    std::size_t steps_passed() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return steps_passed_;
    }
    std::string client_key() const { return client_key_; }
    std::string dir() const { return dir_.string(); }

    ConnectOptions options() const {
        ConnectOptions options;
        options.host = "127.0.0.1";
        options.port = port_;
        options.user = "tester";
        options.identity_files = {client_key_};
        options.known_hosts_file = known_hosts();
        options.ssh_config_file = "none";
        options.use_agent = false;
        options.connect_timeout = std::chrono::milliseconds(5000);
        options.keepalive_interval = std::chrono::seconds(0);
        return options;
    }

private:
    void serve() {
        const int client = ::accept(listen_fd_, nullptr, nullptr);
        if (client < 0) return;
        ssh_bind bind = ssh_bind_new();
        ssh_session session = ssh_new();
        ssh_bind_options_set(bind, SSH_BIND_OPTIONS_HOSTKEY, host_key_.c_str());
        // A client that never closes its end must not hang the test: a silent 10 s ends the serving.
        const long timeout_s = 10;
        ssh_options_set(session, SSH_OPTIONS_TIMEOUT, &timeout_s);
        if (ssh_bind_accept_fd(bind, session, client) == SSH_OK &&
            ssh_handle_key_exchange(session) == SSH_OK) {
            ssh_set_auth_methods(session, chain_.front());
            authenticate(session);
        }
        ssh_disconnect(session);
        ssh_free(session);
        ssh_bind_free(bind);
    }

    void authenticate(ssh_session session) {
        std::size_t step = 0;
        bool banner_sent = false;
        ssh_message message = nullptr;
        while ((message = ssh_message_get(session)) != nullptr) {
            bool accepted = false;
            if (ssh_message_type(message) == SSH_REQUEST_AUTH) {
                if (!banner_sent) {  // as sshd's Banner: before the answer to the first request
                    banner_sent = true;
                    ssh_string banner = ssh_string_from_char(kBanner);
                    ssh_send_issue_banner(session, banner);
                    ssh_string_free(banner);
                }
                if (const std::string user = text(ssh_message_auth_user(message)); !user.empty()) {
                    std::lock_guard<std::mutex> lock(mutex_);
                    user_ = user;  // kbdint responses carry no user name
                }
                const int methods = chain_[step];
                const int method = ssh_message_subtype(message);
// The message API is the simple way to run a one-connection test server; its password and public key
// getters are deprecated in favour of server callbacks, which would need a whole event loop here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
                if (method == SSH_AUTH_METHOD_INTERACTIVE && (methods & SSH_AUTH_METHOD_INTERACTIVE)) {
                    if (!ssh_message_auth_kbdint_is_response(message)) {
                        const char* both[] = {"Password: ", "Verification code: "};
                        char echo[] = {0, 1};
                        const bool code_only = password_.empty();
                        ssh_message_auth_interactive_request(message, "slipway-2fa", "Answer both prompts.",
                                                             code_only ? 1 : 2, code_only ? both + 1 : both,
                                                             code_only ? echo + 1 : echo);
                        ssh_message_free(message);
                        continue;
                    }
                    if (password_.empty()) {
                        accepted = ssh_userauth_kbdint_getnanswers(session) == 1 &&
                                   code_ == text(ssh_userauth_kbdint_getanswer(session, 0));
                    } else {
                        accepted = ssh_userauth_kbdint_getnanswers(session) == 2 &&
                                   password_ == text(ssh_userauth_kbdint_getanswer(session, 0)) &&
                                   code_ == text(ssh_userauth_kbdint_getanswer(session, 1));
                    }
                } else if (method == SSH_AUTH_METHOD_PASSWORD && (methods & SSH_AUTH_METHOD_PASSWORD)) {
                    accepted = password_ == text(ssh_message_auth_password(message));
                } else if (method == SSH_AUTH_METHOD_PUBLICKEY && (methods & SSH_AUTH_METHOD_PUBLICKEY) &&
                           ssh_key_cmp(ssh_message_auth_pubkey(message), client_public_key_,
                                       SSH_KEY_CMP_PUBLIC) == 0) {
                    if (ssh_message_auth_publickey_state(message) == SSH_PUBLICKEY_STATE_NONE) {
                        ssh_message_auth_reply_pk_ok_simple(message);  // "would you take this key?": yes
                        ssh_message_free(message);
                        continue;
                    }
                    accepted = ssh_message_auth_publickey_state(message) == SSH_PUBLICKEY_STATE_VALID;
                }
#pragma GCC diagnostic pop
                if (accepted) {
                    {
                        std::lock_guard<std::mutex> lock(mutex_);
                        steps_passed_ = ++step;
                    }
                    if (step < chain_.size()) {
                        // One factor done: a partial success that names the methods of the next step.
                        ssh_message_auth_set_methods(message, chain_[step]);
                        ssh_message_auth_reply_success(message, 1);
                        ssh_message_free(message);
                        continue;
                    }
                    ssh_message_auth_reply_success(message, 0);
                    ssh_message_free(message);
                    // Serve until the client goes away (it disconnects after connect_ssh's checks).
                    while ((message = ssh_message_get(session)) != nullptr) {
                        ssh_message_reply_default(message);
                        ssh_message_free(message);
                    }
                    return;
                }
                ssh_message_auth_set_methods(message, methods);
            }
            ssh_message_reply_default(message);
            ssh_message_free(message);
        }
    }

    static inline std::atomic<int> counter_{0};
    const std::vector<int> chain_;
    const std::string password_;
    const std::string code_;
    std::filesystem::path dir_;
    std::string host_key_;
    std::string client_key_;
    ssh_key client_public_key_ = nullptr;
    bool ready_ = false;
    int listen_fd_ = -1;
    int port_ = 0;
    mutable std::mutex mutex_;
    std::string user_;
    std::size_t steps_passed_ = 0;
    std::thread thread_;
};

TEST(SshLibsshServer, KeyboardInteractivePromptsGoThroughTheCallback) {
    TestSshServer server(SSH_AUTH_METHOD_INTERACTIVE, "hunter2", "123456");
    if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
    std::vector<InteractivePrompt> seen;
    std::string seen_name, seen_instruction;
    SessionCallbacks callbacks;
    callbacks.keyboard_interactive =
        [&](const std::string& name, const std::string& instruction,
            const std::vector<InteractivePrompt>& prompts) -> std::optional<std::vector<std::string>> {
        seen_name = name;
        seen_instruction = instruction;
        seen = prompts;
        return std::vector<std::string>{"hunter2", "123456"};
    };
    auto session = connect_ssh(server.options(), callbacks);
    ASSERT_TRUE(session.ok()) << session.error();
    EXPECT_EQ(seen_name, "slipway-2fa");
    EXPECT_EQ(seen_instruction, "Answer both prompts.");
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].text, "Password: ");
    EXPECT_FALSE(seen[0].echo);
    EXPECT_EQ(seen[1].text, "Verification code: ");
    EXPECT_TRUE(seen[1].echo);
    EXPECT_EQ(server.user_seen(), "tester");
}

TEST(SshLibsshServer, BannerReachesTheCallbackOnceAndPrintsPlain) {
    TestSshServer server(SSH_AUTH_METHOD_PASSWORD, "correct horse", "");
    if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
    std::vector<std::string> banners;
    SessionCallbacks callbacks;
    callbacks.banner = [&](const std::string& text) { banners.push_back(text); };
    callbacks.password = [](const std::string&, const std::string&) -> std::optional<std::string> {
        return std::string("correct horse");
    };
    auto session = connect_ssh(server.options(), callbacks);
    ASSERT_TRUE(session.ok()) << session.error();
    ASSERT_EQ(banners.size(), 1u);
    EXPECT_EQ(banners[0], kBanner);  // the callback gets the server's text as sent
    EXPECT_EQ(printable_prompt_text(banners[0]), "Authorized use only.\n");
}

TEST(SshLibsshServer, WrongOrCancelledKeyboardInteractiveFails) {
    for (const bool cancel : {false, true}) {
        TestSshServer server(SSH_AUTH_METHOD_INTERACTIVE, "hunter2", "123456");
        if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
        SessionCallbacks callbacks;
        callbacks.keyboard_interactive =
            [&](const std::string&, const std::string&,
                const std::vector<InteractivePrompt>&) -> std::optional<std::vector<std::string>> {
            if (cancel) return std::nullopt;
            return std::vector<std::string>{"hunter2", "000000"};
        };
        auto session = connect_ssh(server.options(), callbacks);
        ASSERT_FALSE(session.ok());
        EXPECT_EQ(session.code(), StatusCode::kAuthFailed) << session.error();
        EXPECT_NE(session.error().find("keyboard-interactive"), std::string::npos) << session.error();
        EXPECT_NE(session.error().find("'tester'"), std::string::npos) << session.error();
    }
}

TEST(SshLibsshServer, PasswordOnlyThroughTheCallback) {
    TestSshServer server(SSH_AUTH_METHOD_PASSWORD, "correct horse", "");
    if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
    std::string asked;
    SessionCallbacks callbacks;
    callbacks.password = [&](const std::string& user, const std::string& host) -> std::optional<std::string> {
        asked = user + "@" + host;
        return std::string("correct horse");
    };
    auto session = connect_ssh(server.options(), callbacks);
    ASSERT_TRUE(session.ok()) << session.error();
    EXPECT_EQ(asked, "tester@127.0.0.1");
}

TEST(SshLibsshServer, NoPasswordCallbackMeansNoPasswordAttempt) {
    TestSshServer server(SSH_AUTH_METHOD_PASSWORD, "correct horse", "");
    if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
    auto session = connect_ssh(server.options(), SessionCallbacks{});
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.code(), StatusCode::kAuthFailed);
    EXPECT_NE(session.error().find("server accepts: password"), std::string::npos) << session.error();
}

// AuthenticationMethods publickey,keyboard-interactive: the key is a partial success, then the one-time
// code is asked through the keyboard-interactive callback.
TEST(SshLibsshServer, PublickeyThenKeyboardInteractive) {
    TestSshServer server({SSH_AUTH_METHOD_PUBLICKEY, SSH_AUTH_METHOD_INTERACTIVE}, "", "424242");
    if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
    std::vector<InteractivePrompt> seen;
    SessionCallbacks callbacks;
    callbacks.keyboard_interactive =
        [&](const std::string&, const std::string&,
            const std::vector<InteractivePrompt>& prompts) -> std::optional<std::vector<std::string>> {
        seen = prompts;
        return std::vector<std::string>{"424242"};
    };
    callbacks.password = [](const std::string&, const std::string&) -> std::optional<std::string> {
        ADD_FAILURE() << "the server never offered password";
        return std::nullopt;
    };
    auto session = connect_ssh(server.options(), callbacks);
    ASSERT_TRUE(session.ok()) << session.error();
    EXPECT_EQ(server.steps_passed(), 2u);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].text, "Verification code: ");
}

// AuthenticationMethods publickey,password.
TEST(SshLibsshServer, PublickeyThenPassword) {
    TestSshServer server({SSH_AUTH_METHOD_PUBLICKEY, SSH_AUTH_METHOD_PASSWORD}, "correct horse", "");
    if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
    int asked = 0;
    SessionCallbacks callbacks;
    callbacks.password = [&](const std::string&, const std::string&) -> std::optional<std::string> {
        ++asked;
        return std::string("correct horse");
    };
    auto session = connect_ssh(server.options(), callbacks);
    ASSERT_TRUE(session.ok()) << session.error();
    EXPECT_EQ(server.steps_passed(), 2u);
    EXPECT_EQ(asked, 1);
}

// A server that answers "partial" to every password for ever gets 8 steps, then a clear failure: the user
// is not asked again and again.
TEST(SshLibsshServer, EndlessPartialSuccessesStopAfterEightSteps) {
    TestSshServer server(std::vector<int>(20, SSH_AUTH_METHOD_PASSWORD), "again", "");
    if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
    int asked = 0;
    SessionCallbacks callbacks;
    callbacks.password = [&](const std::string&, const std::string&) -> std::optional<std::string> {
        ++asked;
        return std::string("again");
    };
    auto session = connect_ssh(server.options(), callbacks);
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.code(), StatusCode::kAuthFailed) << session.error();
    EXPECT_NE(session.error().find("stopped after 8 partial successes"), std::string::npos)
        << session.error();
    EXPECT_EQ(asked, 9);
}

// A wrong second factor fails with kAuthFailed naming the user and host, what passed partially and what
// was tried after it.
TEST(SshLibsshServer, WrongSecondFactorFailsNamingWhatPassedPartially) {
    {
        TestSshServer server({SSH_AUTH_METHOD_PUBLICKEY, SSH_AUTH_METHOD_INTERACTIVE}, "", "424242");
        if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
        SessionCallbacks callbacks;
        callbacks.keyboard_interactive =
            [](const std::string&, const std::string&,
               const std::vector<InteractivePrompt>&) -> std::optional<std::vector<std::string>> {
            return std::vector<std::string>{"000000"};
        };
        auto session = connect_ssh(server.options(), callbacks);
        ASSERT_FALSE(session.ok());
        EXPECT_EQ(session.code(), StatusCode::kAuthFailed) << session.error();
        EXPECT_EQ(server.steps_passed(), 1u);
        const std::string& error = session.error();
        EXPECT_NE(error.find("'tester' on 127.0.0.1:" + std::to_string(server.port())), std::string::npos)
            << error;
        EXPECT_NE(error.find("partial success: key " + server.client_key()), std::string::npos) << error;
        EXPECT_NE(error.find("tried: keyboard-interactive"), std::string::npos) << error;
    }
    {
        TestSshServer server({SSH_AUTH_METHOD_PUBLICKEY, SSH_AUTH_METHOD_PASSWORD}, "correct horse", "");
        SessionCallbacks callbacks;
        callbacks.password = [](const std::string&, const std::string&) -> std::optional<std::string> {
            return std::string("wrong horse");
        };
        auto session = connect_ssh(server.options(), callbacks);
        ASSERT_FALSE(session.ok());
        EXPECT_EQ(session.code(), StatusCode::kAuthFailed) << session.error();
        EXPECT_EQ(server.steps_passed(), 1u);
        EXPECT_NE(session.error().find("then still needed: password"), std::string::npos) << session.error();
        EXPECT_NE(session.error().find("tried: password"), std::string::npos) << session.error();
    }
}

// Without the key the first step fails, and the second factor is never asked for.
TEST(SshLibsshServer, SecondFactorIsNotAskedBeforeTheFirstPasses) {
    TestSshServer server({SSH_AUTH_METHOD_PUBLICKEY, SSH_AUTH_METHOD_INTERACTIVE}, "", "424242");
    if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
    bool asked = false;
    SessionCallbacks callbacks;
    callbacks.keyboard_interactive =
        [&](const std::string&, const std::string&,
            const std::vector<InteractivePrompt>&) -> std::optional<std::vector<std::string>> {
        asked = true;
        return std::vector<std::string>{"424242"};
    };
    ConnectOptions options = server.options();
    options.identity_files = {server.client_key() + "-missing"};
    auto session = connect_ssh(options, callbacks);
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.code(), StatusCode::kAuthFailed) << session.error();
    EXPECT_FALSE(asked);
    EXPECT_EQ(server.steps_passed(), 0u);
}

// ProxyCommand from the ssh config: libssh runs it and speaks SSH over its stdin/stdout. The command here
// is a one-process relay in Python (one process holds the TCP socket, so the connection ends when libssh
// ends the command), and it leaves a mark to show that it carried the connection.
TEST(SshLibsshServer, ProxyCommandFromTheConfigCarriesTheConnection) {
    if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "/usr/bin/python3 not available";
    TestSshServer server(SSH_AUTH_METHOD_PASSWORD, "correct horse", "");
    if (!server.ready()) GTEST_SKIP() << "ssh-keygen not available";
    const std::string relay = server.dir() + "/relay.py";
    std::ofstream(relay) << R"(import os, select, socket, sys
host, port, mark = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(mark, "w") as f:
    f.write(f"{host}:{port}\n")
s = socket.create_connection((host, port))
while True:
    ready, _, _ = select.select([0, s], [], [])
    if 0 in ready:
        data = os.read(0, 65536)
        if not data:
            break
        s.sendall(data)
    if s in ready:
        data = s.recv(65536)
        if not data:
            break
        while data:
            data = data[os.write(1, data):]
)";
    const std::string mark = server.dir() + "/proxy-used";
    const std::string config = server.dir() + "/ssh_config";
    std::ofstream(config) << "Host via-proxy\n"
                             "  HostName 127.0.0.1\n"
                             "  ProxyCommand /usr/bin/python3 "
                          << relay << " %h %p " << mark << "\n";
    ConnectOptions options = server.options();
    options.host = "via-proxy";
    options.ssh_config_file = config;
    SessionCallbacks callbacks;
    callbacks.password = [](const std::string&, const std::string&) -> std::optional<std::string> {
        return std::string("correct horse");
    };
    auto session = connect_ssh(options, callbacks);
    ASSERT_TRUE(session.ok()) << session.error();
    std::string used;
    std::getline(std::ifstream(mark), used);
    EXPECT_EQ(used, "127.0.0.1:" + std::to_string(server.port()));
}

TEST(SshLibsshServer, ConnectTimesOutWhenTheServerNeverAnswers) {
    int port = 0;
    const int fd = listen_on_loopback(&port);  // the kernel accepts the TCP connection; no SSH banner follows
    ASSERT_GE(fd, 0);
    ConnectOptions options;
    options.host = "127.0.0.1";
    options.port = port;
    options.user = "tester";
    options.ssh_config_file = "none";
    options.use_agent = false;
    options.connect_timeout = std::chrono::milliseconds(700);
    const auto start = std::chrono::steady_clock::now();
    auto session = connect_ssh(options);
    const auto took = std::chrono::steady_clock::now() - start;
    ::close(fd);
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.code(), StatusCode::kTimeout) << session.error();
    EXPECT_NE(session.error().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
        << session.error();
    EXPECT_GE(took, std::chrono::milliseconds(600));
    EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(SshLibsshServer, ConnectionRefusedIsUnavailable) {
    int port = 0;
    const int fd = listen_on_loopback(&port);
    ::close(fd);  // the port is now closed
    ConnectOptions options;
    options.host = "127.0.0.1";
    options.port = port;
    options.ssh_config_file = "none";
    options.use_agent = false;
    auto session = connect_ssh(options);
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.code(), StatusCode::kUnavailable) << session.error();
}

}  // namespace
}  // namespace slipway::remote
