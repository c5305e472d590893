// Terminal prompts with echo off and a signal-safe restore (see terminal_prompt.h).
#include "remote/ssh/terminal_prompt.h"

#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace slipway::remote {
namespace {

constexpr int kRestoringSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP};
constexpr int kSignalCount = sizeof kRestoringSignals / sizeof kRestoringSignals[0];

// What the signal handler needs, set while one prompt has echo off (prompts never nest: one terminal).
volatile sig_atomic_t g_tty_fd = -1;
termios g_saved_termios{};
termios g_quiet_termios{};
struct sigaction g_previous_actions[kSignalCount];
bool g_installed[kSignalCount] = {};

// ^Z: the terminal gets its settings back while the process is stopped (the shell must not be left
// without echo), and echo goes off again when it is continued; the read goes on (SA_RESTART).
void stop_with_terminal_restored(int fd) {
    struct sigaction stop {};
    stop.sa_handler = SIG_DFL;
    sigemptyset(&stop.sa_mask);
    struct sigaction ours {};
    ::sigaction(SIGTSTP, &stop, &ours);
    sigset_t tstp;
    sigemptyset(&tstp);
    sigaddset(&tstp, SIGTSTP);
    ::raise(SIGTSTP);                            // pending: SIGTSTP is blocked inside its handler
    ::sigprocmask(SIG_UNBLOCK, &tstp, nullptr);  // the process stops here until SIGCONT
    ::sigprocmask(SIG_BLOCK, &tstp, nullptr);
    ::sigaction(SIGTSTP, &ours, nullptr);
    if (fd >= 0) ::tcsetattr(fd, TCSANOW, &g_quiet_termios);
}

void restore_terminal_and_reraise(int signal_number) {
    const int saved_errno = errno;  // the interrupted code may be about to read errno
    const int fd = g_tty_fd;
    if (fd >= 0) {
        ::tcsetattr(fd, TCSANOW, &g_saved_termios);  // async-signal-safe
        (void)!::write(fd, "\n", 1);
    }
    if (signal_number == SIGTSTP) {
        stop_with_terminal_restored(fd);
        errno = saved_errno;
        return;
    }
    for (int i = 0; i < kSignalCount; ++i) {
        if (kRestoringSignals[i] == signal_number)
            ::sigaction(signal_number, &g_previous_actions[i], nullptr);
    }
    // Delivered when this handler returns (the signal is blocked inside it), with the previous action.
    ::raise(signal_number);
    errno = saved_errno;
}

// Echo off for its lifetime; the destructor (or a terminating signal) puts the saved settings back.
class EchoOff {
public:
    explicit EchoOff(int fd) {
        if (::tcgetattr(fd, &g_saved_termios) != 0) return;
        g_quiet_termios = g_saved_termios;
        g_quiet_termios.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHONL);
        g_tty_fd = fd;
        for (int i = 0; i < kSignalCount; ++i) {
            const int signal_number = kRestoringSignals[i];
            g_installed[i] = false;
            if (::sigaction(signal_number, nullptr, &g_previous_actions[i]) != 0) continue;
            // An ignored signal (nohup, a background job) stays ignored: a handler would make it count.
            if (!(g_previous_actions[i].sa_flags & SA_SIGINFO) && g_previous_actions[i].sa_handler == SIG_IGN)
                continue;
            struct sigaction action {};
            action.sa_handler = restore_terminal_and_reraise;
            sigemptyset(&action.sa_mask);
            // After ^Z and fg the read goes on; a terminating signal's read may fail (the prompt then fails).
            action.sa_flags = signal_number == SIGTSTP ? SA_RESTART : 0;
            g_installed[i] = ::sigaction(signal_number, &action, nullptr) == 0;
        }
        ::tcsetattr(fd, TCSAFLUSH, &g_quiet_termios);
        active_ = true;
    }
    ~EchoOff() {
        if (!active_) return;
        ::tcsetattr(g_tty_fd, TCSANOW, &g_saved_termios);
        for (int i = 0; i < kSignalCount; ++i) {
            if (g_installed[i]) ::sigaction(kRestoringSignals[i], &g_previous_actions[i], nullptr);
            g_installed[i] = false;
        }
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
    // A read error (EINTR included) mid-line leaves part of a secret: never hand that on as the answer.
    const bool failed = c == EOF && std::ferror(tty) != 0;
    std::fclose(tty);
    if (failed || (c == EOF && line.empty())) return std::nullopt;
    return line;
}

}  // namespace slipway::remote
