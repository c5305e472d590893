// A child process of the run service on This computer (the engine of a local run, a pipeline step): started
// with posix_spawn in a process group of its own, its output in a file, waited for without blocking, and
// stopped the way the engine wants: SIGTERM to it, which `slipway-engine launch` forwards to every rank so a
// checkpoint is saved; SIGKILL to its group only when it has not exited in time (the launcher's ranks, in
// groups of their own, die with it through PR_SET_PDEATHSIG). When it exits, whatever it left in its group
// is killed before it is reaped. Qt-free: the app's tracker polls it from a timer, the pipeline runner waits
// on its own thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "contract/status.h"

namespace slipway::app {

struct ProcessSpec {
    std::string program;  // a path, or a name looked up on PATH
    std::vector<std::string> arguments;
    std::string working_dir;  // empty: ours
    // Standard output, appended to; empty: /dev/null. Standard error goes there too unless `error_file`.
    std::string output_file;
    std::string error_file;
    bool truncate_output = false;  // `output_file` emptied first (it is the step's product), else appended
};

struct ProcessExit {
    int code = 0;    // its exit status when it exited
    int signal = 0;  // the signal that ended it, 0 when it exited
    bool success() const { return signal == 0 && code == 0; }
    // "exit code 2", "killed by signal 11 (Segmentation fault)".
    std::string describe() const;
};

class ChildProcess {
public:
    // Fails, naming the program and why, when it cannot be started (not found, not executable, a working
    // folder or output file that cannot be used).
    [[nodiscard]] static Result<ChildProcess> start(const ProcessSpec& spec);

    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    // One still running is stopped (stop(5 s)): nothing outlives its owner.
    ~ChildProcess();

    pid_t pid() const { return pid_; }
    // Its exit once it has exited (what it left in its group is killed, then it is reaped; asked again, the
    // same answer), nullopt while it runs.
    std::optional<ProcessExit> poll();
    // poll() until it exits or `timeout` has passed.
    std::optional<ProcessExit> wait_for(std::chrono::milliseconds timeout);
    // SIGTERM to the process itself.
    void terminate();
    // SIGKILL to its process group while it runs: the process and everything it started that did not leave
    // the group.
    void kill_group();
    // terminate(), up to `grace` for it to exit, then kill_group(); its exit.
    ProcessExit stop(std::chrono::milliseconds grace);

private:
    explicit ChildProcess(pid_t pid) : pid_(pid) {}

    pid_t pid_ = -1;
    std::optional<ProcessExit> exit_;
};

// Asks `poll` (returning an optional) every 20 ms until it answers or `timeout` has passed: the one wait
// loop of ChildProcess::wait_for and LocalJob::wait.
template <typename Poll>
auto poll_until(std::chrono::milliseconds timeout, Poll poll) -> decltype(poll()) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (auto answer = poll()) return answer;
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// The last non-empty line of a text file (at most `max_chars` of it), "" when there is none: what a failed
// step or engine said last, for its error.
std::string last_line_of(const std::string& path, size_t max_chars = 240);

}  // namespace slipway::app
