// Unit tests of shell_quote/shell_command: what reaches the remote shell is one word with the value intact
// (checked here by running the quoted word through the local /bin/sh, and on the real sshd in
// ssh_quote_cluster_test.cpp).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

// Runs `printf %s WORD` through /bin/sh and returns what it printed.
std::string through_local_shell(const std::string& quoted) {
    const std::string command = "printf %s " + quoted;
    // popen's command itself goes through sh -c: that is the point of the test.
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    std::array<char, 4096> buffer{};
    std::size_t n = 0;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
        out.append(buffer.data(), n);
    pclose(pipe);
    return out;
}

TEST(ShellQuote, PlainWordsStayReadable) {
    EXPECT_EQ(*shell_quote("squeue"), "squeue");
    EXPECT_EQ(*shell_quote("runs/2024-01-01_a.b/run.json"), "runs/2024-01-01_a.b/run.json");
    EXPECT_EQ(*shell_quote("--parsable"), "--parsable");
    EXPECT_EQ(*shell_quote("%i"), "%i");
}

TEST(ShellQuote, EverythingElseIsSingleQuoted) {
    EXPECT_EQ(*shell_quote(""), "''");
    EXPECT_EQ(*shell_quote("a b"), "'a b'");
    EXPECT_EQ(*shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(*shell_quote("$(touch x)"), "'$(touch x)'");
    EXPECT_EQ(*shell_quote("~/x"), "'~/x'");  // no tilde expansion of a value
    EXPECT_EQ(*shell_quote("A=b"), "'A=b'");  // never read as an assignment
}

TEST(ShellQuote, RejectsNulNamingWhatAndWhere) {
    auto quoted = shell_quote(std::string("job\0name", 8), "job name");
    ASSERT_FALSE(quoted.ok());
    EXPECT_NE(quoted.error().find("job name"), std::string::npos) << quoted.error();
    EXPECT_NE(quoted.error().find("position 3"), std::string::npos) << quoted.error();
    auto command = shell_command({"echo", "ok", std::string("a\0", 2)});
    ASSERT_FALSE(command.ok());
    EXPECT_NE(command.error().find("argument 2"), std::string::npos) << command.error();
}

TEST(ShellQuote, AdversarialValuesSurviveARealShell) {
    const std::string values[] = {
        "it's",
        "say \"hi\"",
        "$(touch /tmp/pwned)",
        "`touch /tmp/pwned`",
        "a; touch /tmp/pwned",
        "line1\nline2",
        "  spaces  ",
        "Привет, мир ✓ 日本",
        "$HOME ${PATH} $$",
        "back\\slash\\",
        "'",
        "''\"\"'",
        "*",
        "-n",
        "a|b&c>d<e(f)g{h}",
        "\t\r\x01\x7f",
        "trailing\n\n",
        "!history #comment ~tilde",
    };
    for (const std::string& value : values) {
        auto quoted = shell_quote(value);
        ASSERT_TRUE(quoted.ok()) << quoted.error();
        // printf's format is %s, so '-n' and '%' arrive as data too.
        EXPECT_EQ(through_local_shell(*quoted), value) << "quoted as " << *quoted;
    }
}

TEST(ShellQuote, CommandJoinsQuotedWords) {
    auto command = shell_command({"mkdir", "-p", "runs/it's here"});
    ASSERT_TRUE(command.ok());
    EXPECT_EQ(*command, "mkdir -p 'runs/it'\\''s here'");
}

}  // namespace
}  // namespace slipway::remote
