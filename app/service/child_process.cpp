// ChildProcess over posix_spawn and waitpid (see child_process.h).
#include "service/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

extern char** environ;

namespace slipway::app {
namespace {

// The spawn's attributes and file actions, released however start() returns.
struct SpawnSetup {
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_t actions;
    SpawnSetup() {
        posix_spawnattr_init(&attributes);
        posix_spawn_file_actions_init(&actions);
    }
    ~SpawnSetup() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attributes);
    }
    SpawnSetup(const SpawnSetup&) = delete;
    SpawnSetup& operator=(const SpawnSetup&) = delete;
};

ProcessExit exit_of(int status) {
    ProcessExit out;
    if (WIFSIGNALED(status)) {
        out.signal = WTERMSIG(status);
        out.code = -1;
    } else {
        out.code = WEXITSTATUS(status);
    }
    return out;
}

}  // namespace

std::string ProcessExit::describe() const {
    if (signal == 0) return "exit code " + std::to_string(code);
    const char* name = strsignal(signal);
    return "killed by signal " + std::to_string(signal) +
           (name != nullptr ? " (" + std::string(name) + ")" : "");
}

Result<ChildProcess> ChildProcess::start(const ProcessSpec& spec) {
    const auto failed = [&](const std::string& why) {
        return Result<ChildProcess>::Error("cannot start " + spec.program + ": " + why);
    };
    if (spec.program.empty()) return Result<ChildProcess>::Error("cannot start a process: no program given");
    SpawnSetup setup;
    // Its own process group (one signal reaches its ranks), default signal dispositions and an empty mask:
    // the caller's thread may block signals the child must see (Qt's threads do).
    sigset_t all;
    sigset_t none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setpgroup(&setup.attributes, 0);
    posix_spawnattr_setsigdefault(&setup.attributes, &all);
    posix_spawnattr_setsigmask(&setup.attributes, &none);
    posix_spawnattr_setflags(&setup.attributes,
                             POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    const std::string out = spec.output_file.empty() ? "/dev/null" : spec.output_file;
    // Opened here first: a file that cannot be written is this call's error, named, not a child's silence.
    const auto check_writable = [](const std::string& file, int extra_flags) -> std::string {
        if (file.empty()) return "";
        const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | extra_flags, 0644);
        if (fd < 0) return "cannot write " + file + ": " + std::strerror(errno);
        ::close(fd);
        return "";
    };
    if (std::string why = check_writable(spec.output_file, spec.truncate_output ? O_TRUNC : 0); !why.empty())
        return failed(why);
    if (std::string why = check_writable(spec.error_file, 0); !why.empty()) return failed(why);
    posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO, out.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (spec.error_file.empty()) {
        posix_spawn_file_actions_adddup2(&setup.actions, STDOUT_FILENO, STDERR_FILENO);
    } else {
        posix_spawn_file_actions_addopen(&setup.actions, STDERR_FILENO, spec.error_file.c_str(),
                                         O_WRONLY | O_CREAT | O_APPEND, 0644);
    }
    if (!spec.working_dir.empty()) {
        if (::access(spec.working_dir.c_str(), X_OK) != 0)
            return failed("working folder " + spec.working_dir + ": " + std::strerror(errno));
        posix_spawn_file_actions_addchdir_np(&setup.actions, spec.working_dir.c_str());
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(spec.program.c_str()));
    for (const std::string& a : spec.arguments)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    // glibc's posix_spawnp reports a program that could not be executed as its result (it waits for exec).
    const int rc =
        posix_spawnp(&pid, spec.program.c_str(), &setup.actions, &setup.attributes, argv.data(), environ);
    if (rc != 0) return failed(std::strerror(rc));
    return ChildProcess(pid);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_), exit_(other.exit_) {
    other.pid_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        if (pid_ > 0 && !exit_) stop(std::chrono::seconds(5));
        pid_ = other.pid_;
        exit_ = other.exit_;
        other.pid_ = -1;
    }
    return *this;
}

ChildProcess::~ChildProcess() {
    if (pid_ > 0 && !poll()) stop(std::chrono::seconds(5));
}

std::optional<ProcessExit> ChildProcess::poll() {
    if (exit_ || pid_ <= 0) return exit_;
    // Seen exited but not reaped yet (WNOWAIT): while its zombie holds the group id, whatever it left in its
    // group is killed, so nothing outlives it and no later process that got the number is ever signalled.
    siginfo_t info = {};
    int rc = 0;
    do {
        rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        exit_ = ProcessExit{-1, 0};  // reaped by someone else (ECHILD): its status is lost
        return exit_;
    }
    if (info.si_pid != pid_) return std::nullopt;  // still running
    ::kill(-pid_, SIGKILL);
    int status = 0;
    pid_t done = 0;
    do {
        done = ::waitpid(pid_, &status, 0);
    } while (done < 0 && errno == EINTR);
    exit_ = done == pid_ ? exit_of(status) : ProcessExit{-1, 0};
    return exit_;
}

std::optional<ProcessExit> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
    return poll_until(timeout, [this] { return poll(); });
}

void ChildProcess::terminate() {
    if (pid_ > 0 && !exit_) ::kill(pid_, SIGTERM);
}

void ChildProcess::kill_group() {
    if (pid_ > 0 && !exit_) ::kill(-pid_, SIGKILL);
}

ProcessExit ChildProcess::stop(std::chrono::milliseconds grace) {
    terminate();
    if (std::optional<ProcessExit> done = wait_for(grace)) return *done;
    kill_group();
    if (std::optional<ProcessExit> done = wait_for(std::chrono::seconds(5))) return *done;
    return ProcessExit{-1, SIGKILL};  // unkillable (a D-state process): never reaped here
}

std::string last_line_of(const std::string& path, size_t max_chars) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "";
    // The tail is enough: the last line is in the final few KiB of any log worth reading.
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff from = size > 8192 ? size - 8192 : 0;
    in.seekg(from);
    std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t end = tail.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) return "";
    const size_t newline = tail.find_last_of('\n', end);
    const size_t start = newline == std::string::npos ? 0 : newline + 1;
    std::string line = tail.substr(start, end + 1 - start);
    if (line.size() > max_chars) line = line.substr(line.size() - max_chars);
    return line;
}

}  // namespace slipway::app
