// launch (launcher.h): fork/exec the ranks, relay their output line by line, watch them, stop them.
#include "dist/launcher.h"

#include "dist/rendezvous.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <thread>

extern char** environ;

namespace slipway::dist {
namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_forward_signal = 0;
extern "C" void remember_signal(int signal) {
    g_forward_signal = signal;
}

struct Stream {
    int fd = -1;
    std::string pending;  // an incomplete last line
    bool is_err = false;
};

struct Rank {
    pid_t pid = -1;
    bool running = false;
    int exit_code = 0;
    Stream out, err;
};

int exit_code_of(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return 1;
}

// Everything after the last newline stays pending; `flush_all` (at EOF) writes it too.
void relay(Stream& s, const std::string& prefix, std::ostream& out, bool flush_all) {
    size_t start = 0;
    for (size_t nl; (nl = s.pending.find('\n', start)) != std::string::npos; start = nl + 1)
        out << prefix << std::string_view(s.pending).substr(start, nl - start + 1);
    s.pending.erase(0, start);
    if (flush_all && !s.pending.empty()) {
        out << prefix << s.pending << "\n";
        s.pending.clear();
    }
    out.flush();
}

// What every rank's environment gets from the launcher.
struct Rendezvous {
    std::string secret;     // a fresh one per launch
    int port = 0;           // MASTER_PORT when given; 0: rank 0 publishes the port in port_file
    std::string port_file;  // in a private folder the launcher removes at the end
};

// The environment of rank `rank`: ours plus the rendezvous variables (built before fork: the child may
// only make async-signal-safe calls).
std::vector<std::string> rank_environment(const LaunchOptions& o, int rank, const Rendezvous& rdzv,
                                          int threads) {
    std::vector<std::pair<std::string, std::string>> set = {
        {"RANK", std::to_string(rank)},
        {"LOCAL_RANK", std::to_string(rank)},
        {"WORLD_SIZE", std::to_string(o.nproc)},
        {"LOCAL_WORLD_SIZE", std::to_string(o.nproc)},
        {"GROUP_RANK", "0"},
        {"MASTER_ADDR", o.master_addr},
        {"OMP_NUM_THREADS", std::to_string(threads)},
        {kSecretVariable, rdzv.secret},
    };
    // An inherited MASTER_PORT or port file (launch inside a Slurm job) must not describe another world.
    if (rdzv.port > 0) {
        set.emplace_back("MASTER_PORT", std::to_string(rdzv.port));
        set.emplace_back(kPortFileVariable, "");
    } else {
        set.emplace_back(kPortFileVariable, rdzv.port_file);
        set.emplace_back("MASTER_PORT", "");
    }
    std::vector<std::string> env;
    bool has_wait_policy = false;
    for (char** e = environ; *e; ++e) {
        const std::string entry(*e);
        const std::string name = entry.substr(0, entry.find('='));
        bool replaced = false;
        for (const auto& [key, value] : set)
            replaced = replaced || key == name;
        has_wait_policy = has_wait_policy || name == "OMP_WAIT_POLICY";
        if (!replaced) env.push_back(entry);
    }
    for (const auto& [key, value] : set)
        if (!value.empty()) env.push_back(key + "=" + value);
    // Ranks share the cores: idle OpenMP workers must sleep, not spin, or they starve the others.
    if (!has_wait_policy) env.push_back("OMP_WAIT_POLICY=PASSIVE");
    return env;
}

Result<Rank> start_rank(const LaunchOptions& o, int rank, const Rendezvous& rdzv, int threads) {
    std::vector<std::string> args;
    const bool program = o.command[0].find('/') != std::string::npos;
    if (!program) args.push_back(o.self_exe);
    args.insert(args.end(), o.command.begin(), o.command.end());
    std::vector<std::string> env = rank_environment(o, rank, rdzv, threads);
    std::vector<char*> argv, envp;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string exec_failed = "launch: cannot run " + args[0] + "\n";
    const pid_t parent = getpid();

    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    auto close_pipes = [&] {
        for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
            if (fd >= 0) close(fd);
    };
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
        const std::string e = std::strerror(errno);
        close_pipes();
        return Status::Error("launch: pipe: " + e);
    }
    const pid_t pid = fork();
    if (pid < 0) {
        const std::string e = std::strerror(errno);
        close_pipes();
        return Status::Error("launch: fork: " + e);
    }
    if (pid == 0) {                           // child: only async-signal-safe calls until exec
        setpgid(0, 0);                        // its own group: stopping a rank stops whatever it started too
        prctl(PR_SET_PDEATHSIG, SIGKILL);     // a launcher killed outright takes its ranks with it
        if (getppid() != parent) _exit(137);  // it died before prctl took effect
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        execve(argv[0], argv.data(), envp.data());
        (void)!write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
        _exit(127);
    }
    setpgid(pid, pid);  // also here, so the group exists before the parent may signal it
    close(out_pipe[1]);
    close(err_pipe[1]);
    Rank r;
    r.pid = pid;
    r.running = true;
    r.out.fd = out_pipe[0];
    r.err.fd = err_pipe[0];
    r.err.is_err = true;
    return r;
}

}  // namespace

Result<int> pick_free_port(const std::string& addr) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Status::Error(std::string("socket: ") + std::strerror(errno));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = 0;
    if (inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
        const std::string e = std::strerror(errno);
        close(fd);
        return Status::Error("no free TCP port on " + addr + ": " + e);
    }
    close(fd);
    return static_cast<int>(ntohs(sa.sin_port));
}

Result<LaunchResult> launch(const LaunchOptions& o, std::ostream& out, std::ostream& err) {
    if (o.command.empty()) return Status::Error("launch: nothing to run (give the command after --)");
    if (o.nproc < 1) return Status::Error("launch: --nproc must be >= 1, got " + std::to_string(o.nproc));
    Rendezvous rdzv;
    rdzv.port = o.master_port;
    Result<std::string> secret = new_rendezvous_secret();
    if (!secret.ok()) return secret.status();
    rdzv.secret = *secret;
    std::string private_dir;  // holds the port file; removed when the ranks are done
    if (rdzv.port == 0) {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/slipway-launch-XXXXXX";
        if (mkdtemp(pattern.data()) == nullptr)
            return Status::Error("launch: cannot make a folder for the rendezvous port: " + pattern + ": " +
                                 std::strerror(errno));
        private_dir = pattern;
        rdzv.port_file = private_dir + "/port";
    }
    struct RemoveDir {
        std::string path;
        ~RemoveDir() {
            if (path.empty()) return;
            std::remove((path + "/port").c_str());
            rmdir(path.c_str());
        }
    } remove_private_dir{private_dir};
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    const int threads = o.threads_per_rank > 0 ? o.threads_per_rank : std::max(1, cores / o.nproc);

    struct sigaction action {};
    action.sa_handler = remember_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    signal(SIGCHLD, SIG_DFL);  // an inherited SIG_IGN would make waitpid lose the ranks' exit codes
    g_forward_signal = 0;

    std::vector<Rank> ranks;
    for (int r = 0; r < o.nproc; ++r) {
        Result<Rank> started = start_rank(o, r, rdzv, threads);
        if (!started.ok()) {
            for (Rank& running : ranks) {
                kill(-running.pid, SIGKILL);
                waitpid(running.pid, nullptr, 0);
                close(running.out.fd);
                close(running.err.fd);
            }
            return started.status();
        }
        ranks.push_back(std::move(*started));
    }
    err << "launch: " << o.nproc << " ranks, " << threads << " thread(s) each, master " << o.master_addr
        << ":" << (rdzv.port > 0 ? std::to_string(rdzv.port) : "(a free port rank 0 binds)") << "\n";

    LaunchResult result;
    std::optional<Clock::time_point> term_at, kill_at, drain_until;
    bool forwarded = false;
    int alive = o.nproc;
    while (true) {
        // Relay output.
        std::vector<pollfd> fds;
        std::vector<std::pair<int, Stream*>> owners;
        for (int r = 0; r < o.nproc; ++r) {
            for (Stream* s : {&ranks[r].out, &ranks[r].err}) {
                if (s->fd < 0) continue;
                fds.push_back({s->fd, POLLIN, 0});
                owners.emplace_back(r, s);
            }
        }
        if (alive == 0 && !drain_until) drain_until = Clock::now() + std::chrono::seconds(2);
        // Done when every rank exited and its output is read; a leftover grandchild holding a pipe open
        // does not keep the launcher waiting.
        if (alive == 0 && (fds.empty() || Clock::now() >= *drain_until)) break;
        if (!fds.empty()) {
            poll(fds.data(), fds.size(), 100);
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        for (size_t i = 0; i < fds.size(); ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            Stream& s = *owners[i].second;
            const std::string prefix = o.label ? std::to_string(owners[i].first) + ": " : "";
            char buffer[65536];
            const ssize_t n = read(s.fd, buffer, sizeof(buffer));
            if (n > 0) {
                s.pending.append(buffer, static_cast<size_t>(n));
                relay(s, prefix, s.is_err ? err : out, false);
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                relay(s, prefix, s.is_err ? err : out, true);
                close(s.fd);
                s.fd = -1;
            }
        }
        // Reap.
        for (int r = 0; r < o.nproc; ++r) {
            if (!ranks[r].running) continue;
            int status = 0;
            if (waitpid(ranks[r].pid, &status, WNOHANG) != ranks[r].pid) continue;
            ranks[r].running = false;
            --alive;
            ranks[r].exit_code = exit_code_of(status);
            if (ranks[r].exit_code != 0 && result.failed_rank < 0 && !forwarded) {
                result.failed_rank = r;
                result.exit_code = ranks[r].exit_code;
                term_at = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.grace_s * 1000));
                err << "launch: rank " << r << " exited with code " << ranks[r].exit_code
                    << "; the other ranks get " << o.grace_s << " s to stop on their own\n";
            }
        }
        // Stop: a signal to the launcher goes to every rank; after a failure, stragglers are stopped.
        if (g_forward_signal && !forwarded) {
            forwarded = true;
            err << "launch: passing signal " << g_forward_signal << " to the ranks\n";
            for (Rank& r : ranks)
                if (r.running) {
                    kill(-r.pid, SIGTERM);
                    kill(-r.pid, SIGCONT);
                }
            // Rank 0 finishes its step and saves a checkpoint: that may take long on a big model.
            kill_at = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.stop_timeout_s * 1000));
        }
        if (term_at && Clock::now() >= *term_at && alive > 0) {
            err << "launch: stopping " << alive << " remaining rank(s) (SIGTERM)\n";
            for (Rank& r : ranks)
                if (r.running) {
                    kill(-r.pid, SIGTERM);
                    kill(-r.pid, SIGCONT);  // a frozen (SIGSTOPped) rank must see its SIGTERM
                }
            term_at.reset();
            kill_at = Clock::now() + std::chrono::seconds(10);
        }
        if (kill_at && Clock::now() >= *kill_at && alive > 0) {
            err << "launch: killing " << alive << " remaining rank(s) (SIGKILL)\n";
            for (Rank& r : ranks)
                if (r.running) kill(-r.pid, SIGKILL);
            kill_at.reset();
        }
    }
    for (Rank& r : ranks) {
        for (Stream* s : {&r.out, &r.err}) {
            if (s->fd < 0) continue;
            relay(*s, o.label ? std::to_string(&r - ranks.data()) + ": " : "", s->is_err ? err : out, true);
            close(s->fd);
        }
    }
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    if (result.failed_rank < 0 && forwarded) {
        result.exit_code = 128 + SIGTERM;
        for (const Rank& r : ranks)
            if (r.exit_code != 0) result.exit_code = r.exit_code;
    }
    result.summary = result.failed_rank >= 0
                         ? "launch: failed: rank " + std::to_string(result.failed_rank) +
                               " exited with code " + std::to_string(result.exit_code)
                         : (forwarded ? "launch: stopped by a signal"
                                      : "launch: all " + std::to_string(o.nproc) + " ranks finished");
    return result;
}

}  // namespace slipway::dist
