// Benchmark: Slurm status polls over one persistent libssh Session against a new OpenSSH process per poll
// (what a script running `ssh login squeue` in a loop pays: process start, TCP, key exchange, auth), in
// one invocation against the same sshd, printed as a table with the ratio (goal: at least 10x).
// Usage: ssh_bench [--cluster-env STATE_DIR/cluster.env] [--polls 100] [--command "squeue -h -o %i"]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "remote/ssh/libssh_session.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

std::map<std::string, std::string> read_env_file(const std::string& path) {
    std::map<std::string, std::string> values;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return values;
}

struct Timings {
    std::vector<double> ms;
    double total_s() const { return std::accumulate(ms.begin(), ms.end(), 0.0) / 1000.0; }
    double percentile(double p) const {
        std::vector<double> sorted = ms;
        std::sort(sorted.begin(), sorted.end());
        return sorted[std::min(sorted.size() - 1,
                               static_cast<std::size_t>(p * static_cast<double>(sorted.size())))];
    }
    double mean() const {
        return std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
    }
};

// Runs argv (no shell), discarding output; returns the exit status or -1.
int spawn_and_wait(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return -1;
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

void print_row(const char* name, const Timings& t) {
    std::printf("| %-38s | %5zu | %8.3f | %8.2f | %8.2f | %8.2f |\n", name, t.ms.size(), t.total_s(),
                t.mean(), t.percentile(0.5), t.percentile(0.95));
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Status polls: persistent libssh Session vs one OpenSSH process per poll"};
    std::string env_file = std::getenv("SLIPWAY_CLUSTER_ENV") ? std::getenv("SLIPWAY_CLUSTER_ENV") : "";
    int polls = 100;
    std::string command = "squeue -h -o %i";
    bool compare_kex = false;
    app.add_option("--cluster-env", env_file, "cluster.env written by tests/cluster/start_cluster.sh");
    app.add_option("--polls", polls, "polls per method")->check(CLI::PositiveNumber);
    app.add_option("--command", command, "the status command each poll runs");
    app.add_flag(
        "--compare-kex", compare_kex,
        "also time OpenSSH with libssh's key exchange (curve25519) instead of its default sntrup761x25519");
    CLI11_PARSE(app, argc, argv);

    const auto env = read_env_file(env_file);
    if (env.count("SLIPWAY_SSH_PORT") == 0) {
        std::cerr << "ssh_bench: no cluster.env (" << (env_file.empty() ? "set --cluster-env" : env_file)
                  << "); start one with tests/cluster/start_cluster.sh\n";
        return 2;
    }
    slipway::remote::ConnectOptions options;
    options.host = env.at("SLIPWAY_SSH_HOST");
    options.port = std::stoi(env.at("SLIPWAY_SSH_PORT"));
    options.user = env.at("SLIPWAY_SSH_USER");
    options.identity_files = {env.at("SLIPWAY_SSH_KEY")};
    options.known_hosts_file = env.at("SLIPWAY_SSH_KNOWN_HOSTS");
    options.ssh_config_file = "none";
    options.use_agent = false;

    // Persistent session: connecting is paid once (reported separately), then only the polls.
    const auto connect_start = Clock::now();
    auto session = slipway::remote::connect_ssh(options);
    const double connect_ms = std::chrono::duration<double, std::milli>(Clock::now() - connect_start).count();
    if (!session) {
        std::cerr << "ssh_bench: " << session.error() << "\n";
        return 1;
    }
    Timings persistent;
    for (int i = 0; i < polls; ++i) {
        const auto start = Clock::now();
        auto result = (*session)->exec(command, std::chrono::seconds(30));
        persistent.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        if (!result || result->exit_status != 0) {
            std::cerr << "ssh_bench: persistent poll " << i
                      << " failed: " << (result ? result->err : result.error()) << "\n";
            return 1;
        }
    }

    const std::vector<std::string> ssh_argv = {"ssh",
                                               "-F",
                                               "/dev/null",
                                               "-o",
                                               "BatchMode=yes",
                                               "-o",
                                               "StrictHostKeyChecking=yes",
                                               "-o",
                                               "UserKnownHostsFile=" + env.at("SLIPWAY_SSH_KNOWN_HOSTS"),
                                               "-o",
                                               "IdentitiesOnly=yes",
                                               "-i",
                                               env.at("SLIPWAY_SSH_KEY"),
                                               "-p",
                                               env.at("SLIPWAY_SSH_PORT"),
                                               env.at("SLIPWAY_SSH_USER") + "@" + env.at("SLIPWAY_SSH_HOST"),
                                               command};
    auto time_processes = [&](const std::vector<std::string>& argv_for_poll, Timings* timings) {
        for (int i = 0; i < polls; ++i) {
            const auto start = Clock::now();
            const int status = spawn_and_wait(argv_for_poll);
            timings->ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
            if (status != 0) {
                std::cerr << "ssh_bench: ssh poll " << i << " exited with " << status << "\n";
                return false;
            }
        }
        return true;
    };
    Timings spawned;
    if (!time_processes(ssh_argv, &spawned)) return 1;
    Timings spawned_curve;
    if (compare_kex) {
        std::vector<std::string> curve_argv = ssh_argv;
        curve_argv.insert(curve_argv.begin() + 1, {"-o", "KexAlgorithms=curve25519-sha256"});
        if (!time_processes(curve_argv, &spawned_curve)) return 1;
    }

    std::printf("ssh_bench: %d polls of `%s` on %s (persistent session connect: %.1f ms, not counted)\n\n",
                polls, command.c_str(), (*session)->describe().c_str(), connect_ms);
    std::printf("| %-38s | %5s | %8s | %8s | %8s | %8s |\n", "method", "polls", "total s", "mean ms",
                "p50 ms", "p95 ms");
    std::printf("|%s|%s|%s|%s|%s|%s|\n", std::string(40, '-').c_str(), std::string(7, '-').c_str(),
                std::string(10, '-').c_str(), std::string(10, '-').c_str(), std::string(10, '-').c_str(),
                std::string(10, '-').c_str());
    print_row("libssh Session, one connection", persistent);
    print_row("OpenSSH `ssh host squeue`, per poll", spawned);
    if (compare_kex) print_row("OpenSSH per poll, curve25519 kex", spawned_curve);
    const double ratio = spawned.total_s() / persistent.total_s();
    std::printf("\nratio (OpenSSH per poll / persistent session): %.1fx (goal >= 10x)\n", ratio);
    if (compare_kex) {
        std::printf("ratio with OpenSSH on curve25519 kex: %.1fx\n",
                    spawned_curve.total_s() / persistent.total_s());
    }
    return 0;
}
