// ask_terminal on a real pseudo-terminal: a child process asks for a secret on its controlling terminal
// (the pty), the parent types into the pty's master side and reads the terminal's settings. Checks that
// echo is off while the secret is typed, back on after the answer, back on when ^C interrupts and while
// ^Z has the prompt stopped; that an ignored SIGINT stays ignored; and that a failed read mid-line gives
// no answer.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "remote/ssh/terminal_prompt.h"

namespace slipway::remote {
namespace {

class PtyPrompt : public ::testing::Test {
protected:
    void SetUp() override {
        master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
        if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0)
            GTEST_SKIP() << "no pseudo-terminals here";
        slave_name_ = ::ptsname(master_);
        // The parent keeps the slave side open so its settings can be read after the child is gone.
        slave_ = ::open(slave_name_.c_str(), O_RDWR | O_NOCTTY);
        ASSERT_GE(slave_, 0);
    }
    void TearDown() override {
        if (slave_ >= 0) ::close(slave_);
        if (master_ >= 0) ::close(master_);
    }

    // Forks a child whose controlling terminal is the pty and which asks for a secret; its exit code is
    // 0 for the answer "s3cret", 1 for another answer, 2 for none.
    // `before` runs in the child first (signal dispositions).
    pid_t start_prompt(void (*before)() = nullptr) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::setsid();
            const int tty = ::open(slave_name_.c_str(), O_RDWR);
            if (tty < 0 || ::ioctl(tty, TIOCSCTTY, 0) != 0) ::_exit(3);
            ::close(master_);
            if (before) before();
            const std::optional<std::string> answer = ask_terminal("Verification code: ", true);
            ::_exit(!answer ? 2 : *answer == "s3cret" ? 0 : 1);
        }
        return pid;
    }

    // Reads what the child printed until `text` appears (or 5 s pass).
    std::string read_until(const std::string& text) {
        std::string seen;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (seen.find(text) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
            pollfd p{master_, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) continue;
            char buffer[256];
            const ssize_t n = ::read(master_, buffer, sizeof buffer);
            if (n <= 0) break;
            seen.append(buffer, static_cast<std::size_t>(n));
        }
        return seen;
    }

    bool echo_on() const {
        termios t{};
        EXPECT_EQ(::tcgetattr(slave_, &t), 0);
        return (t.c_lflag & ECHO) != 0;
    }

    // The prompt's child answered and exited 0, and the terminal has echo back.
    void expect_clean_exit_with_echo_on(pid_t child) const {
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status)) << "exit status " << status;
        EXPECT_EQ(WEXITSTATUS(status), 0);
        EXPECT_TRUE(echo_on());
    }

    int master_ = -1;
    int slave_ = -1;
    std::string slave_name_;
};

TEST_F(PtyPrompt, SecretIsNotEchoedAndEchoComesBack) {
    ASSERT_TRUE(echo_on());
    const pid_t child = start_prompt();
    ASSERT_GT(child, 0);
    ASSERT_NE(read_until("Verification code: ").find("Verification code: "), std::string::npos);
    EXPECT_FALSE(echo_on());
    ASSERT_EQ(::write(master_, "s3cret\n", 7), 7);
    // With echo on, the terminal would send "s3cret" back before the newline the prompt prints after it.
    const std::string after = read_until("\n");
    EXPECT_NE(after.find('\n'), std::string::npos);
    EXPECT_EQ(after.find("s3cret"), std::string::npos) << after;
    expect_clean_exit_with_echo_on(child);
}

TEST_F(PtyPrompt, CtrlCRestoresEchoAndStillInterrupts) {
    const pid_t child = start_prompt();
    ASSERT_GT(child, 0);
    ASSERT_NE(read_until("Verification code: ").find("Verification code: "), std::string::npos);
    EXPECT_FALSE(echo_on());
    ASSERT_EQ(::write(master_, "s3\x03", 3), 3);  // ^C (VINTR) in the middle of typing
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << status;
    EXPECT_EQ(WTERMSIG(status), SIGINT);
    EXPECT_TRUE(echo_on());
}

// nohup or a background job ignores SIGINT: the prompt must not install a handler that makes ^C count
// (it would also turn echo back on while the secret is still being typed).
TEST_F(PtyPrompt, IgnoredSigintStaysIgnored) {
    const pid_t child = start_prompt([] { ::signal(SIGINT, SIG_IGN); });
    ASSERT_GT(child, 0);
    ASSERT_NE(read_until("Verification code: ").find("Verification code: "), std::string::npos);
    ASSERT_EQ(::write(master_, "s3\x03", 3), 3);  // ^C also drops the typed "s3" (the line discipline)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(echo_on());
    ASSERT_EQ(::write(master_, "s3cret\n", 7), 7);
    expect_clean_exit_with_echo_on(child);
}

// ^D mid-line hands "s3" to the reader without a newline; a signal whose handler returns then fails the
// next read (EINTR). The half-typed secret must not come back as the answer.
TEST_F(PtyPrompt, ReadErrorAfterPartialInputGivesNoAnswer) {
    const pid_t child = start_prompt([] {
        struct sigaction action {};
        action.sa_handler = [](int) {};
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGUSR1, &action, nullptr);  // no SA_RESTART: read fails with EINTR
    });
    ASSERT_GT(child, 0);
    ASSERT_NE(read_until("Verification code: ").find("Verification code: "), std::string::npos);
    ASSERT_EQ(::write(master_, "s3\x04", 3), 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_EQ(::kill(child, SIGUSR1), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "exit status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 2);  // nullopt, not "s3"
    EXPECT_TRUE(echo_on());
}

// ^Z stops the prompt with the terminal's settings restored; when continued, echo goes off again and the
// prompt still reads the answer. The prompting process runs in a foreground group whose parent (a job
// control stand-in in the same session) keeps the group from being orphaned, so SIGTSTP really stops it.
TEST_F(PtyPrompt, CtrlZRestoresEchoWhileStoppedAndEchoOffAgainAfterContinue) {
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::setsid();
        const int tty = ::open(slave_name_.c_str(), O_RDWR);
        if (tty < 0 || ::ioctl(tty, TIOCSCTTY, 0) != 0) ::_exit(3);
        ::close(master_);
        ::signal(SIGTTOU, SIG_IGN);  // tcsetpgrp from a group that will be in the background
        const pid_t prompt = ::fork();
        if (prompt == 0) {
            ::setpgid(0, 0);
            ::signal(SIGTTOU, SIG_DFL);
            const std::optional<std::string> answer = ask_terminal("Verification code: ", true);
            ::_exit(!answer ? 2 : *answer == "s3cret" ? 0 : 1);
        }
        ::setpgid(prompt, prompt);
        ::tcsetpgrp(tty, prompt);
        int status = 0;
        if (::waitpid(prompt, &status, WUNTRACED) != prompt || !WIFSTOPPED(status)) ::_exit(4);
        (void)!::write(tty, "[stopped]", 9);
        char byte = 0;
        if (::read(go[0], &byte, 1) != 1) ::_exit(5);
        ::kill(prompt, SIGCONT);
        if (::waitpid(prompt, &status, 0) != prompt || !WIFEXITED(status)) ::_exit(6);
        ::_exit(WEXITSTATUS(status));
    }
    ASSERT_GT(child, 0);
    ::close(go[0]);
    ASSERT_NE(read_until("Verification code: ").find("Verification code: "), std::string::npos);
    EXPECT_FALSE(echo_on());
    ASSERT_EQ(::write(master_, "\x1a", 1), 1);  // ^Z (VSUSP)
    ASSERT_NE(read_until("[stopped]").find("[stopped]"), std::string::npos);
    EXPECT_TRUE(echo_on());
    ASSERT_EQ(::write(go[1], "c", 1), 1);
    ::close(go[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (echo_on() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(echo_on());
    ASSERT_EQ(::write(master_, "s3cret\n", 7), 7);
    expect_clean_exit_with_echo_on(child);
}

}  // namespace
}  // namespace slipway::remote
