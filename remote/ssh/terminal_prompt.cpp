// Terminal prompts with echo off and a signal-safe restore (see terminal_prompt.h).
#include "remote/ssh/terminal_prompt.h"

#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <cstdio>

namespace slipway::remote {
namespace {

constexpr int kRestoringSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int kSignalCount = sizeof kRestoringSignals / sizeof kRestoringSignals[0];

// What the signal handler needs, set while one prompt has echo off (prompts never nest: one terminal).
volatile sig_atomic_t g_tty_fd = -1;
termios g_saved_termios{};
struct sigaction g_previous_actions[kSignalCount];

void restore_terminal_and_reraise(int signal_number) {
    const int fd = g_tty_fd;
    if (fd >= 0) {
        ::tcsetattr(fd, TCSANOW, &g_saved_termios);  // async-signal-safe
        (void)!::write(fd, "\n", 1);
    }
    for (int i = 0; i < kSignalCount; ++i) {
        if (kRestoringSignals[i] == signal_number)
            ::sigaction(signal_number, &g_previous_actions[i], nullptr);
    }
    // Delivered when this handler returns (the signal is blocked inside it), with the previous action.
    ::raise(signal_number);
}

// Echo off for its lifetime; the destructor (or a terminating signal) puts the saved settings back.
class EchoOff {
public:
    explicit EchoOff(int fd) {
        if (::tcgetattr(fd, &g_saved_termios) != 0) return;
        struct sigaction action {};
        action.sa_handler = restore_terminal_and_reraise;
        sigemptyset(&action.sa_mask);
        g_tty_fd = fd;
        for (int i = 0; i < kSignalCount; ++i)
            ::sigaction(kRestoringSignals[i], &action, &g_previous_actions[i]);
        termios quiet = g_saved_termios;
        quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHONL);
        ::tcsetattr(fd, TCSAFLUSH, &quiet);
        active_ = true;
    }
    ~EchoOff() {
        if (!active_) return;
        ::tcsetattr(g_tty_fd, TCSANOW, &g_saved_termios);
        for (int i = 0; i < kSignalCount; ++i)
            ::sigaction(kRestoringSignals[i], &g_previous_actions[i], nullptr);
        g_tty_fd = -1;
    }
    EchoOff(const EchoOff&) = delete;
    EchoOff& operator=(const EchoOff&) = delete;

private:
    bool active_ = false;
};

}  // namespace

std::optional<std::string> ask_terminal(const std::string& prompt, bool secret) {
    FILE* tty = std::fopen("/dev/tty", "r+");
    if (!tty) return std::nullopt;
    std::string line;
    int c = EOF;
    {
        std::optional<EchoOff> echo_off;
        if (secret) echo_off.emplace(fileno(tty));  // before the prompt: nothing typed after it is echoed
        std::fputs(prompt.c_str(), tty);
        std::fflush(tty);
        while ((c = std::fgetc(tty)) != EOF && c != '\n')
            line += static_cast<char>(c);
        if (secret) {
            std::fputs("\n", tty);
            std::fflush(tty);
        }
    }
    std::fclose(tty);
    if (c == EOF && line.empty()) return std::nullopt;
    return line;
}

}  // namespace slipway::remote
