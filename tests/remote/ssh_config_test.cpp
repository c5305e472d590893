// Unit tests of ~/.ssh/config parsing and target resolution: Host patterns (wildcards, negation, first
// value wins), HostName/User/Port/IdentityFile/ProxyJump/UserKnownHostsFile, tokens, and errors that
// name the file and line.
#include <gtest/gtest.h>

#include "remote/ssh/ssh_config.h"

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
    const SshHostConfig login = config.lookup("login-7");
    EXPECT_EQ(login.hostname, "%h.cluster.example.org");
    EXPECT_EQ(login.user, "alice");  // not "fallback" from Host *
    EXPECT_EQ(login.port, 22);
    EXPECT_EQ(login.proxy_jump, "bob@bastion.example.org:2222");
    ASSERT_EQ(login.identity_files.size(), 2u);
    EXPECT_EQ(login.identity_files[0], "~/.ssh/id_cluster");
    EXPECT_EQ(login.identity_files[1], "~/.ssh/id_all");

    const SshHostConfig old = config.lookup("login-old");
    EXPECT_EQ(old.user, "fallback");
    EXPECT_TRUE(old.hostname.empty());

    const SshHostConfig short_host = config.lookup("short");
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

TEST(SshConfig, MatchAndIncludeAreReportedNotApplied) {
    const SshConfig config = parse("Match host x\n  User nobody\nHost y\n  User yes\nInclude other\n");
    EXPECT_EQ(config.lookup("x").user, "");
    EXPECT_EQ(config.lookup("y").user, "yes");
    ASSERT_EQ(config.warnings.size(), 2u);
    EXPECT_NE(config.warnings[0].find("test_config:1"), std::string::npos);
}

}  // namespace
}  // namespace slipway::remote
