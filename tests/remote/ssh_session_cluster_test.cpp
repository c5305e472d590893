// The libssh Session against the real test sshd (tests/cluster, label cluster): exec, host key policy
// (known / unknown with reject, accept once per host, accept and save / changed), authentication failures
// and callbacks, two-factor login (publickey then password) on the cluster's second sshd, exec timeout,
// reconnect after the server drops the connection, ProxyJump, the ssh config alias, Slurm commands as the
// test user, and started processes (stdin and stdout/stderr streaming while other calls go on, exit status,
// terminate, a process outliving its session).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "remote/ssh/libssh_session.h"
#include "remote/ssh/shell_quote.h"
#include "ssh_cluster_env.h"

namespace slipway::remote {
namespace {

using std::chrono::milliseconds;
using testing::ClusterEnv;
using testing::make_local_temp_dir;
using testing::run_local;

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// "SHA256:..." of a public key file, as OpenSSH's ssh-keygen computes it.
std::string keygen_fingerprint(const std::string& public_key_file) {
    const std::string line = run_local("ssh-keygen -lf " + *shell_quote(public_key_file));
    const auto start = line.find("SHA256:");
    return start == std::string::npos ? "" : line.substr(start, line.find(' ', start) - start);
}

// A new ed25519 key pair (passphrase may be empty) in `dir`; returns the private key path.
std::string new_key(const std::string& dir, const std::string& name, const std::string& passphrase = "") {
    const std::string path = dir + "/" + name;
    run_local("ssh-keygen -q -t ed25519 -C slipway-test -N " + *shell_quote(passphrase) + " -f " +
              *shell_quote(path));
    return path;
}

TEST(SshSessionCluster, ConnectAndExecReturnsOutErrAndExitStatus) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    SessionCallbacks callbacks;
    callbacks.unknown_host_key = [](const HostKeyInfo& info) {
        ADD_FAILURE() << "known host asked about: " << info.host;
        return HostKeyDecision::kReject;
    };
    auto session = connect_ssh(env.connect_options(), callbacks);
    ASSERT_TRUE(session.ok()) << session.error();
    EXPECT_TRUE((*session)->is_connected());
    auto result = (*session)->exec("printf out; printf err >&2; exit 3", milliseconds(10000));
    ASSERT_TRUE(result.ok()) << result.error();
    EXPECT_EQ(result->out, "out");
    EXPECT_EQ(result->err, "err");
    EXPECT_EQ(result->exit_status, 3);
    // stdin is closed: a command that reads it ends at once.
    auto reads_stdin = (*session)->exec("cat; echo done", milliseconds(5000));
    ASSERT_TRUE(reads_stdin.ok()) << reads_stdin.error();
    EXPECT_EQ(reads_stdin->out, "done\n");
    auto who = (*session)->exec("id -un", milliseconds(10000));
    ASSERT_TRUE(who.ok());
    EXPECT_EQ(who->out, env["SLIPWAY_SSH_USER"] + "\n");
    // Large output on both streams at once must not stall on a full window.
    auto big =
        (*session)->exec("head -c 3000000 /dev/zero; head -c 1000000 /dev/zero >&2", milliseconds(20000));
    ASSERT_TRUE(big.ok()) << big.error();
    EXPECT_EQ(big->out.size(), 3000000u);
    EXPECT_EQ(big->err.size(), 1000000u);
}

TEST(SshSessionCluster, UnknownHostKeyRejectAcceptOnceAcceptAndSave) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    const std::string dir = make_local_temp_dir("unknown-host");
    const std::string known_hosts = dir + "/known_hosts";  // does not exist yet
    const std::string expected = keygen_fingerprint(env["SLIPWAY_SSH_HOST_PUBLIC_KEY"]);
    ASSERT_FALSE(expected.empty());
    ConnectOptions options = env.connect_options();
    options.known_hosts_file = known_hosts;

    std::vector<HostKeyInfo> asked;
    HostKeyDecision answer = HostKeyDecision::kReject;
    SessionCallbacks callbacks;
    callbacks.unknown_host_key = [&](const HostKeyInfo& info) {
        asked.push_back(info);
        return answer;
    };

    auto rejected = connect_ssh(options, callbacks);
    ASSERT_FALSE(rejected.ok());
    EXPECT_EQ(rejected.code(), StatusCode::kHostKeyRejected) << rejected.error();
    ASSERT_EQ(asked.size(), 1u);
    EXPECT_EQ(asked[0].sha256_fingerprint, expected);
    EXPECT_EQ(asked[0].key_type, "ssh-ed25519");
    EXPECT_EQ(asked[0].host, "[127.0.0.1]:" + env["SLIPWAY_SSH_PORT"]);
    EXPECT_EQ(asked[0].known_hosts_file, known_hosts);
    EXPECT_NE(rejected.error().find(expected), std::string::npos) << rejected.error();
    EXPECT_FALSE(std::filesystem::exists(known_hosts));

    answer = HostKeyDecision::kAcceptOnce;
    auto once = connect_ssh(options, callbacks);
    ASSERT_TRUE(once.ok()) << once.error();
    EXPECT_EQ(asked.size(), 2u);
    EXPECT_FALSE(std::filesystem::exists(known_hosts));
    // The same Session does not ask again when it reconnects.
    ASSERT_TRUE((*once)->reconnect().ok());
    EXPECT_EQ(asked.size(), 2u);

    answer = HostKeyDecision::kAcceptAndSave;
    auto saved = connect_ssh(options, callbacks);
    ASSERT_TRUE(saved.ok()) << saved.error();
    EXPECT_EQ(asked.size(), 3u);
    const std::string written = read_file(known_hosts);
    EXPECT_NE(written.find("[127.0.0.1]:" + env["SLIPWAY_SSH_PORT"]), std::string::npos) << written;
    // OpenSSH agrees with what was written: the saved entry makes the host known.
    EXPECT_NE(
        run_local("ssh-keygen -F '[127.0.0.1]:" + env["SLIPWAY_SSH_PORT"] + "' -f " + known_hosts + " -l"),
        "");
    auto again = connect_ssh(options, SessionCallbacks{});  // no one to ask: must be known now
    ASSERT_TRUE(again.ok()) << again.error();
    std::filesystem::remove_all(dir);
}

// "Accept once" is a decision about one host: the same key on another host name asks again. The jump
// host 127.0.0.1 and the target localhost are the same sshd with the same key.
TEST(SshSessionCluster, AcceptOnceIsPerHostNotPerKey) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    const std::string dir = make_local_temp_dir("accept-once");
    ConnectOptions options = env.connect_options();
    options.host = "localhost";
    options.proxy_jump = env["SLIPWAY_SSH_USER"] + "@127.0.0.1:" + env["SLIPWAY_SSH_PORT"];
    options.known_hosts_file = dir + "/known_hosts";  // empty: both hosts are unknown
    std::vector<HostKeyInfo> asked;
    SessionCallbacks callbacks;
    callbacks.unknown_host_key = [&](const HostKeyInfo& info) {
        asked.push_back(info);
        return HostKeyDecision::kAcceptOnce;
    };
    auto session = connect_ssh(options, callbacks);
    ASSERT_TRUE(session.ok()) << session.error();
    ASSERT_EQ(asked.size(), 2u);
    EXPECT_EQ(asked[0].host, "[127.0.0.1]:" + env["SLIPWAY_SSH_PORT"]);
    EXPECT_EQ(asked[1].host, "[localhost]:" + env["SLIPWAY_SSH_PORT"]);
    EXPECT_EQ(asked[0].sha256_fingerprint, asked[1].sha256_fingerprint);
    // A reconnect of the same Session asks neither again.
    ASSERT_TRUE((*session)->reconnect().ok());
    EXPECT_EQ(asked.size(), 2u);
    std::filesystem::remove_all(dir);
}

// AuthenticationMethods publickey,password on a real sshd (the cluster's second, root sshd): the key is
// a partial success, then the password completes the login; a wrong password fails naming both steps.
TEST(SshSessionCluster, RealSshdPublickeyThenPassword) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    if (env["SLIPWAY_SSH_2FA_PORT"].empty()) {
        std::string reason;
        std::getline(std::ifstream(env["SLIPWAY_SSH_2FA_SKIP_REASON_FILE"]), reason);
        GTEST_SKIP() << "the two-factor sshd is not running: "
                     << (reason.empty() ? "start_cluster.sh left it out" : reason);
    }
    ConnectOptions options = env.connect_options();
    options.port = std::stoi(env["SLIPWAY_SSH_2FA_PORT"]);
    options.user = env["SLIPWAY_SSH_2FA_USER"];
    options.known_hosts_file = env["SLIPWAY_SSH_2FA_KNOWN_HOSTS"];
    std::string password;
    std::getline(std::ifstream(env["SLIPWAY_SSH_2FA_PASSWORD_FILE"]), password);
    ASSERT_FALSE(password.empty());
    int asked = 0;
    SessionCallbacks callbacks;
    callbacks.password = [&](const std::string&, const std::string&) -> std::optional<std::string> {
        ++asked;
        return password;
    };
    auto session = connect_ssh(options, callbacks);
    ASSERT_TRUE(session.ok()) << session.error();
    EXPECT_EQ(asked, 1);
    auto who = (*session)->exec("whoami", milliseconds(10000));
    ASSERT_TRUE(who.ok()) << who.error();
    EXPECT_EQ(who->out, options.user + "\n");

    password = "not-the-password";
    auto wrong = connect_ssh(options, callbacks);
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.code(), StatusCode::kAuthFailed) << wrong.error();
    EXPECT_NE(wrong.error().find("'" + options.user + "' on 127.0.0.1"), std::string::npos) << wrong.error();
    EXPECT_NE(wrong.error().find("partial success: key " + env["SLIPWAY_SSH_KEY"]), std::string::npos)
        << wrong.error();
    EXPECT_NE(wrong.error().find("tried: password"), std::string::npos) << wrong.error();

    // The password alone is not enough: without the key the password is never asked for.
    options.identity_files = {env["SLIPWAY_SSH_KEY"] + "-missing"};
    asked = 0;
    auto keyless = connect_ssh(options, callbacks);
    ASSERT_FALSE(keyless.ok());
    EXPECT_EQ(asked, 0);
}

TEST(SshSessionCluster, ChangedHostKeyIsRefusedShowingBothFingerprints) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    const std::string dir = make_local_temp_dir("changed-host");
    const std::string impostor = new_key(dir, "impostor");
    const std::string known_hosts = dir + "/known_hosts";
    std::ofstream(known_hosts) << "[127.0.0.1]:" << env["SLIPWAY_SSH_PORT"] << " "
                               << run_local("cut -d' ' -f1,2 " + impostor + ".pub");
    ConnectOptions options = env.connect_options();
    options.known_hosts_file = known_hosts;
    bool asked = false;
    SessionCallbacks callbacks;
    callbacks.unknown_host_key = [&](const HostKeyInfo&) {
        asked = true;
        return HostKeyDecision::kAcceptAndSave;
    };
    auto session = connect_ssh(options, callbacks);
    ASSERT_FALSE(session.ok());
    EXPECT_FALSE(asked) << "a changed key must be refused, not asked about";
    EXPECT_EQ(session.code(), StatusCode::kHostKeyRejected);
    EXPECT_NE(session.error().find("CHANGED"), std::string::npos) << session.error();
    EXPECT_NE(session.error().find(keygen_fingerprint(impostor + ".pub")), std::string::npos)
        << session.error();
    EXPECT_NE(session.error().find(keygen_fingerprint(env["SLIPWAY_SSH_HOST_PUBLIC_KEY"])), std::string::npos)
        << session.error();
    std::filesystem::remove_all(dir);
}

TEST(SshSessionCluster, WrongKeyFailsNamingUserAndHostAndAsksForPassword) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    const std::string dir = make_local_temp_dir("wrong-key");
    ConnectOptions options = env.connect_options();
    options.identity_files = {new_key(dir, "stranger")};
    std::string password_asked_for;
    SessionCallbacks callbacks;
    callbacks.password = [&](const std::string& user, const std::string& host) -> std::optional<std::string> {
        password_asked_for = user + "@" + host;
        return std::string("not-the-password");
    };
    auto session = connect_ssh(options, callbacks);
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.code(), StatusCode::kAuthFailed) << session.error();
    EXPECT_NE(session.error().find("'" + env["SLIPWAY_SSH_USER"] + "'"), std::string::npos)
        << session.error();
    EXPECT_NE(session.error().find("127.0.0.1:" + env["SLIPWAY_SSH_PORT"]), std::string::npos)
        << session.error();
    EXPECT_NE(session.error().find("stranger (not accepted)"), std::string::npos) << session.error();
    EXPECT_EQ(password_asked_for, env["SLIPWAY_SSH_USER"] + "@127.0.0.1");
    std::filesystem::remove_all(dir);
}

TEST(SshSessionCluster, EncryptedKeyAsksPassphraseThroughCallback) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    const std::string dir = make_local_temp_dir("passphrase");
    const std::string key = new_key(dir, "locked", "correct horse");
    // Authorize it for the test user (the cluster's authorized_keys is ours to extend).
    std::ofstream(env["SLIPWAY_CLUSTER_STATE_DIR"] + "/ssh/authorized_keys", std::ios::app)
        << read_file(key + ".pub");
    ConnectOptions options = env.connect_options();
    options.identity_files = {key};

    std::vector<std::string> answers = {"wrong", "correct horse"};
    std::vector<std::string> asked_for;
    SessionCallbacks callbacks;
    callbacks.passphrase = [&](const std::string& key_file) -> std::optional<std::string> {
        asked_for.push_back(key_file);
        if (asked_for.size() > answers.size()) return std::nullopt;
        return answers[asked_for.size() - 1];
    };
    auto session = connect_ssh(options, callbacks);
    ASSERT_TRUE(session.ok()) << session.error();
    EXPECT_EQ(asked_for, (std::vector<std::string>{key, key}));  // wrong, then right

    answers.clear();  // the user cancels
    asked_for.clear();
    auto cancelled = connect_ssh(options, callbacks);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.code(), StatusCode::kAuthFailed);
    EXPECT_NE(cancelled.error().find("passphrase not given"), std::string::npos) << cancelled.error();
    std::filesystem::remove_all(dir);
}

TEST(SshSessionCluster, AuthenticatesThroughSshAgent) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    const std::string dir = make_local_temp_dir("agent");
    const std::string socket = dir + "/agent.sock";
    // A private agent holding the cluster key; the session is given no key file it could use instead.
    const pid_t agent = ::fork();
    ASSERT_GE(agent, 0);
    if (agent == 0) {
        ::execlp("ssh-agent", "ssh-agent", "-D", "-a", socket.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    for (int i = 0; i < 100 && !std::filesystem::exists(socket); ++i)
        std::this_thread::sleep_for(milliseconds(20));
    ASSERT_TRUE(std::filesystem::exists(socket)) << "ssh-agent did not start";
    const std::string add_key = "SSH_AUTH_SOCK=" + socket + " ssh-add -q " + env["SLIPWAY_SSH_KEY"];
    EXPECT_EQ(run_local(add_key + " >/dev/null 2>&1; echo $?"), "0\n");
    const char* previous = std::getenv("SSH_AUTH_SOCK");
    const std::string saved = previous != nullptr ? previous : "";
    ::setenv("SSH_AUTH_SOCK", socket.c_str(), 1);

    ConnectOptions options = env.connect_options();
    options.identity_files = {dir + "/no-such-key"};
    options.use_agent = true;
    auto session = connect_ssh(options);
    EXPECT_TRUE(session.ok()) << session.error();
    options.use_agent = false;  // the same settings without the agent have nothing to offer
    auto without = connect_ssh(options);
    EXPECT_EQ(without.code(), StatusCode::kAuthFailed) << without.error();

    if (previous != nullptr) {
        ::setenv("SSH_AUTH_SOCK", saved.c_str(), 1);
    } else {
        ::unsetenv("SSH_AUTH_SOCK");
    }
    ::kill(agent, SIGTERM);
    ::waitpid(agent, nullptr, 0);
    std::filesystem::remove_all(dir);
}

TEST(SshSessionCluster, ExecTimeoutFailsInTimeAndSessionStaysUsable) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    auto session = connect_ssh(env.connect_options());
    ASSERT_TRUE(session.ok()) << session.error();
    const auto start = std::chrono::steady_clock::now();
    auto result = (*session)->exec("sleep 37.5", milliseconds(500));
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.code(), StatusCode::kTimeout) << result.error();
    EXPECT_NE(result.error().find("500 ms"), std::string::npos) << result.error();
    EXPECT_LT(took, std::chrono::seconds(3));
    auto after = (*session)->exec("echo still here", milliseconds(10000));
    ASSERT_TRUE(after.ok()) << after.error();
    EXPECT_EQ(after->out, "still here\n");
    // The command was ended on the server (a "signal" request), not left running behind the open session.
    bool ended = false;
    for (int attempt = 0; attempt < 30 && !ended; ++attempt) {
        auto running = (*session)->exec("pgrep -u \"$(id -u)\" -f 'sleep 37[.]5'", milliseconds(10000));
        ASSERT_TRUE(running.ok()) << running.error();
        ended = running->exit_status == 1;
        if (!ended) std::this_thread::sleep_for(milliseconds(100));
    }
    EXPECT_TRUE(ended) << "sleep 37.5 still runs on the server after the timeout";
}

TEST(SshSessionCluster, ReconnectsAfterTheServerDropsTheConnection) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    auto session = connect_ssh(env.connect_options());
    ASSERT_TRUE(session.ok()) << session.error();
    // The shell's parent is the sshd process serving this connection only.
    auto server = (*session)->exec("echo $PPID", milliseconds(10000));
    ASSERT_TRUE(server.ok()) << server.error();
    const int server_pid = std::stoi(server->out);
    ASSERT_GT(server_pid, 1);
    ASSERT_EQ(::kill(server_pid, SIGKILL), 0);

    auto lost = (*session)->exec("echo hi", milliseconds(10000));
    ASSERT_FALSE(lost.ok());
    EXPECT_EQ(lost.code(), StatusCode::kUnavailable) << lost.error();
    EXPECT_FALSE((*session)->is_connected());
    EXPECT_EQ((*session)->stat("/").code(), StatusCode::kUnavailable);

    ASSERT_TRUE((*session)->reconnect().ok());
    EXPECT_TRUE((*session)->is_connected());
    auto back = (*session)->exec("echo back", milliseconds(10000));
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(back->out, "back\n");
    EXPECT_TRUE((*session)->stat("/")->is_dir);
}

TEST(SshSessionCluster, ProxyJumpThroughTheSameSshd) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    ConnectOptions options = env.connect_options();
    options.proxy_jump = env["SLIPWAY_SSH_USER"] + "@127.0.0.1:" + env["SLIPWAY_SSH_PORT"];
    auto session = connect_ssh(options);
    ASSERT_TRUE(session.ok()) << session.error();
    EXPECT_NE((*session)->describe().find(" via 127.0.0.1"), std::string::npos);
    // The target sshd sees a TCP connection that the jump host's sshd opened, not this process.
    auto connection = (*session)->exec("echo $SSH_CONNECTION", milliseconds(10000));
    ASSERT_TRUE(connection.ok()) << connection.error();
    std::istringstream fields(connection->out);
    std::string client_ip, client_port;
    fields >> client_ip >> client_port;
    ASSERT_FALSE(client_port.empty());
    const std::string owner = run_local("ss -Htnp state established '( sport = :" + client_port + " )'");
    EXPECT_NE(owner.find("sshd"), std::string::npos) << owner;
    EXPECT_EQ(owner.find("pid=" + std::to_string(::getpid()) + ","), std::string::npos) << owner;

    auto uploaded =
        (*session)->upload_bytes("through the tunnel", env["SLIPWAY_REMOTE_DIR"] + "/jump.txt", 0644);
    ASSERT_TRUE(uploaded.ok()) << uploaded.message();
    EXPECT_EQ(*(*session)->read_range(env["SLIPWAY_REMOTE_DIR"] + "/jump.txt", 0, 100), "through the tunnel");
    // Megabytes both ways, so the tunnel's pump meets full windows and partial writes.
    std::string payload(3 << 20, '\0');
    for (std::size_t i = 0; i < payload.size(); ++i)
        payload[i] = static_cast<char>((i * 131) % 251);
    const std::string big = env["SLIPWAY_REMOTE_DIR"] + "/jump-" + std::to_string(::getpid()) + ".bin";
    ASSERT_TRUE((*session)->upload_bytes(payload, big, 0644).ok());
    auto back = (*session)->read_range(big, 0, payload.size() + 1);
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_TRUE(*back == payload) << "read back " << back->size() << " bytes";
    auto out = (*session)->exec("cat " + *shell_quote(big), milliseconds(20000));
    ASSERT_TRUE(out.ok()) << out.error();
    EXPECT_EQ(out->out.size(), payload.size());
    (*session)->remove(big);

    ConnectOptions broken = env.connect_options();
    broken.proxy_jump = "127.0.0.1:1";  // nothing listens there
    auto failed = connect_ssh(broken);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().find("jump host 127.0.0.1"), std::string::npos) << failed.error();
}

TEST(SshSessionCluster, ProxyJumpReconnectsAfterTheJumpHostDropsIt) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    ConnectOptions options = env.connect_options();
    options.proxy_jump = env["SLIPWAY_SSH_USER"] + "@127.0.0.1:" + env["SLIPWAY_SSH_PORT"];
    auto session = connect_ssh(options);
    ASSERT_TRUE(session.ok()) << session.error();
    // The jump host's sshd process owns the target connection's client socket: kill it.
    auto connection = (*session)->exec("echo $SSH_CONNECTION", milliseconds(10000));
    ASSERT_TRUE(connection.ok()) << connection.error();
    std::istringstream fields(connection->out);
    std::string client_ip, client_port;
    fields >> client_ip >> client_port;
    const std::string owner = run_local("ss -Htnp state established '( sport = :" + client_port + " )'");
    const auto pid_at = owner.find("pid=");
    ASSERT_NE(pid_at, std::string::npos) << owner;
    const int jump_server_pid = std::stoi(owner.substr(pid_at + 4));
    ASSERT_NE(jump_server_pid, ::getpid());
    ASSERT_EQ(::kill(jump_server_pid, SIGKILL), 0);

    auto lost = (*session)->exec("echo hi", milliseconds(10000));
    ASSERT_FALSE(lost.ok());
    EXPECT_EQ(lost.code(), StatusCode::kUnavailable) << lost.error();
    EXPECT_FALSE((*session)->is_connected());
    ASSERT_TRUE((*session)->reconnect().ok());
    auto back = (*session)->exec("echo back", milliseconds(10000));
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(back->out, "back\n");
}

TEST(SshSessionCluster, ProxyJumpByConfigAliases) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    const std::string dir = make_local_temp_dir("jump-config");
    const std::string config = dir + "/config";
    // Both names are aliases only the config knows; the jump host is resolved through its own Host block.
    std::ofstream(config) << "Host behind-the-bastion\n  HostName 127.0.0.1\n  ProxyJump bastion-alias\n"
                          << "Host bastion-alias\n  HostName 127.0.0.1\n"
                          << "Host *\n  Port " << env["SLIPWAY_SSH_PORT"] << "\n  User "
                          << env["SLIPWAY_SSH_USER"] << "\n  IdentityFile " << env["SLIPWAY_SSH_KEY"]
                          << "\n  UserKnownHostsFile " << env["SLIPWAY_SSH_KNOWN_HOSTS"] << "\n";
    ConnectOptions options;
    options.host = "behind-the-bastion";
    options.ssh_config_file = config;
    options.use_agent = false;
    auto session = connect_ssh(options);
    ASSERT_TRUE(session.ok()) << session.error();
    EXPECT_NE((*session)->describe().find("via bastion-alias"), std::string::npos) << (*session)->describe();
    auto result = (*session)->exec("echo through", milliseconds(10000));
    ASSERT_TRUE(result.ok()) << result.error();
    EXPECT_EQ(result->out, "through\n");
    std::filesystem::remove_all(dir);
}

// Bytes this process has sent on the TCP connection whose local port is `port` (from `ss -ti`).
long long bytes_sent_from_port(const std::string& port) {
    const std::string info = run_local("ss -Htni state established '( sport = :" + port + " )'");
    const auto at = info.find("bytes_sent:");
    return at == std::string::npos ? -1 : std::stoll(info.substr(at + 11));
}

TEST(SshSessionCluster, KeepaliveSendsWhileIdle) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    for (const int interval_s : {1, 0}) {
        ConnectOptions options = env.connect_options();
        options.keepalive_interval = std::chrono::seconds(interval_s);
        auto session = connect_ssh(options);
        ASSERT_TRUE(session.ok()) << session.error();
        auto connection = (*session)->exec("echo $SSH_CONNECTION", milliseconds(10000));
        ASSERT_TRUE(connection.ok()) << connection.error();
        std::istringstream fields(connection->out);
        std::string client_ip, client_port;
        fields >> client_ip >> client_port;
        const long long before = bytes_sent_from_port(client_port);
        ASSERT_GE(before, 0) << "no socket with local port " << client_port;
        std::this_thread::sleep_for(milliseconds(2500));
        const long long after = bytes_sent_from_port(client_port);
        if (interval_s > 0) {
            EXPECT_GT(after, before) << "nothing sent in 2.5 s with a 1 s keepalive";
        } else {
            EXPECT_EQ(after, before) << "keepalive 0 must send nothing while idle";
        }
    }
}

TEST(SshSessionCluster, SshConfigAliasResolves) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    ConnectOptions options;
    options.host = env["SLIPWAY_SSH_ALIAS"];
    options.ssh_config_file = env["SLIPWAY_SSH_CONFIG"];
    options.use_agent = false;
    auto session = connect_ssh(options);
    ASSERT_TRUE(session.ok()) << session.error();
    EXPECT_EQ((*session)->describe(), env["SLIPWAY_SSH_USER"] + "@127.0.0.1:" + env["SLIPWAY_SSH_PORT"]);
}

TEST(SshSessionCluster, CallsFromSeveralThreadsAreSerialized) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    ConnectOptions options = env.connect_options();
    options.keepalive_interval = std::chrono::seconds(1);  // the keepalive thread shares the session too
    auto session = connect_ssh(options);
    ASSERT_TRUE(session.ok()) << session.error();
    const std::string file = env["SLIPWAY_REMOTE_DIR"] + "/threads-" + std::to_string(::getpid()) + ".txt";
    ASSERT_TRUE((*session)->upload_bytes("shared", file, 0644).ok());
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 10; ++i) {
                const std::string expected = std::to_string(t) + "-" + std::to_string(i);
                auto result = (*session)->exec("printf " + expected, milliseconds(20000));
                if (!result.ok() || result->out != expected) ++wrong;
                auto bytes = (*session)->read_range(file, 0, 100);
                if (!bytes.ok() || *bytes != "shared") ++wrong;
            }
        });
    }
    for (auto& thread : threads)
        thread.join();
    EXPECT_EQ(wrong.load(), 0);
    (*session)->remove(file);
}

TEST(SshSessionCluster, SlurmCommandsWorkOverSsh) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    auto session = connect_ssh(env.connect_options());
    ASSERT_TRUE(session.ok()) << session.error();
    auto partitions = (*session)->exec("sinfo -h -o '%P %T'", milliseconds(20000));
    ASSERT_TRUE(partitions.ok()) << partitions.error();
    EXPECT_EQ(partitions->exit_status, 0) << partitions->err;
    EXPECT_NE(partitions->out.find(env["SLIPWAY_SLURM_PARTITION"]), std::string::npos) << partitions->out;

    const std::string script =
        env["SLIPWAY_REMOTE_DIR"] + "/test-only-" + std::to_string(::getpid()) + ".sbatch";
    ASSERT_TRUE(
        (*session)->upload_bytes("#!/bin/bash\n#SBATCH --ntasks=1\nsrun hostname\n", script, 0755).ok());
    auto test_only = (*session)->exec(*shell_command({"sbatch", "--test-only", script}), milliseconds(20000));
    ASSERT_TRUE(test_only.ok()) << test_only.error();
    EXPECT_EQ(test_only->exit_status, 0) << test_only->err;
    EXPECT_NE(test_only->err.find("to start at"), std::string::npos) << test_only->err;
    (*session)->remove(script);
}

// Reads until `done(out, err)` or 10 s; returns what was read.
RemoteProcess::Output read_until(RemoteProcess& p,
                                 const std::function<bool(const RemoteProcess::Output&)>& done) {
    RemoteProcess::Output all;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done(all) && !p.exited() && std::chrono::steady_clock::now() < deadline) {
        auto chunk = p.read_available(milliseconds(500));
        if (!chunk.ok()) {
            ADD_FAILURE() << chunk.error();
            break;
        }
        all.out += chunk->out;
        all.err += chunk->err;
    }
    return all;
}

TEST(SshSessionCluster, AStartedProcessStreamsBothWaysWhileOtherCallsGoOn) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    auto session = connect_ssh(env.connect_options(), {});
    ASSERT_TRUE(session.ok()) << session.error();
    auto process = (*session)->start_process(
        R"(while IFS= read -r l; do echo "got $l"; echo "err $l" >&2; done; exit 7)");
    ASSERT_TRUE(process.ok()) << process.error();
    RemoteProcess& p = **process;
    ASSERT_TRUE(p.write_stdin("first\n").ok());
    RemoteProcess::Output one = read_until(p, [](const auto& o) {
        return o.out.find("got first\n") != std::string::npos &&
               o.err.find("err first\n") != std::string::npos;
    });
    EXPECT_EQ(one.out, "got first\n");
    EXPECT_EQ(one.err, "err first\n");
    EXPECT_FALSE(p.exited());

    // A read that waits for output (none comes) does not hold up the session's other calls.
    std::thread reader([&] {
        auto r = p.read_available(milliseconds(3000));
        EXPECT_TRUE(r.ok()) << r.error();
    });
    std::this_thread::sleep_for(milliseconds(200));
    const auto start = std::chrono::steady_clock::now();
    auto echo = (*session)->exec("echo meanwhile", std::chrono::seconds(10));
    const auto took = std::chrono::steady_clock::now() - start;
    reader.join();
    ASSERT_TRUE(echo.ok()) << echo.error();
    EXPECT_EQ(echo->out, "meanwhile\n");
    EXPECT_LT(took, milliseconds(1500));

    ASSERT_TRUE(p.write_stdin("second\n").ok());
    ASSERT_TRUE(p.close_stdin().ok());
    RemoteProcess::Output rest = read_until(p, [](const auto&) { return false; });
    EXPECT_EQ(rest.out, "got second\n");
    EXPECT_TRUE(p.exited());
    EXPECT_EQ(p.exit_status(), 7);
    EXPECT_TRUE(p.read_available(milliseconds(0)).ok());  // ended: nothing more, not an error
}

TEST(SshSessionCluster, TerminateEndsTheCommandAndAProcessOutlivesItsSession) {
    SLIPWAY_REQUIRE_CLUSTER(env);
    auto session = connect_ssh(env.connect_options(), {});
    ASSERT_TRUE(session.ok()) << session.error();
    auto sleeper = (*session)->start_process("exec sleep 4711");
    ASSERT_TRUE(sleeper.ok()) << sleeper.error();
    auto running = [&] {
        auto r =
            (*session)->exec("pgrep -u \"$(id -u)\" -f 'sleep 471[1]' || true", std::chrono::seconds(10));
        return r.ok() && !r->out.empty();
    };
    ASSERT_TRUE(running());
    ASSERT_TRUE((*sleeper)->terminate().ok());
    EXPECT_TRUE((*sleeper)->exited());
    bool gone = false;
    for (int i = 0; i < 50 && !gone; ++i) {
        gone = !running();
        if (!gone) std::this_thread::sleep_for(milliseconds(100));
    }
    EXPECT_TRUE(gone) << "sleep 4711 still runs after terminate()";

    // The connection goes (disconnect, then the session itself): the process's calls fail, nothing crashes.
    auto cat = (*session)->start_process("cat");
    ASSERT_TRUE(cat.ok()) << cat.error();
    (*session)->disconnect();
    EXPECT_EQ((*cat)->write_stdin("x\n").code(), StatusCode::kUnavailable);
    auto cat2 = (*session)->start_process("cat");
    EXPECT_EQ(cat2.code(), StatusCode::kUnavailable);
    ASSERT_TRUE((*session)->reconnect().ok());
    auto cat3 = (*session)->start_process("cat");
    ASSERT_TRUE(cat3.ok()) << cat3.error();
    session->reset();
    auto after = (*cat3)->read_available(milliseconds(100));
    ASSERT_FALSE(after.ok());
    EXPECT_EQ(after.code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace slipway::remote
