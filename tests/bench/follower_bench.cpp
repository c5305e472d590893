// Follower ingest rate: how fast LogFollower turns a growing MLLOG log into parsed lines. The log is
// built from the real MLPerf result logs in tests/data/mlperf-logs (repeated to the asked size); it is
// read through FakeSession (in memory, so the follower's own cost is measured, not the network) in
// 4 MiB reads and, to show where the time goes, split into lines only, and through the contract parser
// alone. With SLIPWAY_CLUSTER_ENV (the local cluster fixture's cluster.env) it is also read over a real
// SFTP session from the test sshd. Prints one table; goal: >= 100 MB/s through the follower.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "contract/mllog_stream.h"
#include "remote/runlog/log_follower.h"
#include "remote/ssh/fake_session.h"
#include "remote/ssh/libssh_session.h"
#include "test_paths.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using slipway::MllogLineKind;
using slipway::MllogStreamItem;

struct Row {
    std::string what;
    double seconds = 0;
    size_t bytes = 0;
    int64_t lines = 0;
    int64_t events = 0;
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// `megabytes` of log made of whole copies of `lines`.
std::string build_log(const std::string& lines, size_t megabytes) {
    std::string log;
    const size_t target = megabytes << 20;
    log.reserve(target + lines.size());
    while (log.size() < target)
        log += lines;
    return log;
}

Row follow(slipway::remote::Session& session, const std::string& path, size_t size, const std::string& what) {
    Row row{what};
    row.bytes = size;
    slipway::remote::FollowerOptions options;
    options.max_bytes_per_poll = size + 1;
    slipway::remote::LogFollower follower(
        std::make_unique<slipway::remote::SessionFileSource>(session, path),
        [&row](MllogStreamItem&& item) {
            ++row.lines;
            if (item.kind == MllogLineKind::kEvent) ++row.events;
        },
        0, options);
    const auto start = Clock::now();
    while (follower.offset() < size) {
        slipway::Result<slipway::remote::PollResult> r = follower.poll();
        if (!r.ok()) {
            std::cerr << "follower_bench: " << r.error() << "\n";
            std::exit(1);
        }
    }
    row.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return row;
}

Row split_only(const std::string& log) {
    Row row{"split into lines only (memchr)"};
    row.bytes = log.size();
    const auto start = Clock::now();
    const char* p = log.data();
    const char* end = p + log.size();
    while (p < end) {
        const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
        if (!nl) break;
        ++row.lines;
        p = static_cast<const char*>(nl) + 1;
    }
    row.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return row;
}

Row parser_only(const std::string& log) {
    Row row{"contract MllogStream alone"};
    row.bytes = log.size();
    slipway::MllogStream stream([&row](MllogStreamItem&& item) {
        ++row.lines;
        if (item.kind == MllogLineKind::kEvent) ++row.events;
    });
    const auto start = Clock::now();
    stream.feed(log);
    stream.finish();
    row.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return row;
}

std::map<std::string, std::string> read_env_file(const std::string& path) {
    std::map<std::string, std::string> env;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        const size_t eq = line.find('=');
        if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return env;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App cli("Follower ingest rate of MLLOG text (tests/bench/follower_bench.cpp)", "follower_bench");
    size_t megabytes = 256;
    std::string data_dir = std::string(test_paths::source_dir("/tests/data/mlperf-logs"));
    cli.add_option("--megabytes", megabytes, "Size of the log to follow")->capture_default_str();
    cli.add_option("--data", data_dir, "Folder of real MLLOG logs")->capture_default_str();
    CLI11_PARSE(cli, argc, argv);

    std::string mixed, mllog_only;
    for (const auto& entry : fs::directory_iterator(data_dir)) {
        if (entry.path().extension() != ".txt") continue;
        std::istringstream in(read_file(entry.path().string()));
        std::string line;
        while (std::getline(in, line)) {
            mixed += line + "\n";
            if (line.find(":::MLLOG ") != std::string::npos) mllog_only += line + "\n";
        }
    }
    if (mllog_only.empty()) {
        std::cerr << "follower_bench: no MLLOG lines in " << data_dir << "\n";
        return 1;
    }
    const std::string mixed_log = build_log(mixed, megabytes);
    const std::string mllog_log = build_log(mllog_only, megabytes);

    std::vector<Row> rows;
    slipway::remote::FakeSession fake;
    fake.put_file("/runs/mixed.out", mixed_log);
    fake.put_file("/runs/mllog.out", mllog_log);
    rows.push_back(split_only(mixed_log));
    rows.push_back(parser_only(mixed_log));
    rows.push_back(
        follow(fake, "/runs/mixed.out", mixed_log.size(), "LogFollower, real slurm log (in memory)"));
    rows.push_back(parser_only(mllog_log));
    rows.back().what = "contract MllogStream alone, MLLOG lines only";
    rows.push_back(
        follow(fake, "/runs/mllog.out", mllog_log.size(), "LogFollower, MLLOG lines only (in memory)"));

    if (const char* env_file = std::getenv("SLIPWAY_CLUSTER_ENV")) {
        const auto env = read_env_file(env_file);
        const std::string remote_file = env.at("SLIPWAY_REMOTE_DIR") + "/follower_bench.out";
        std::ofstream(remote_file, std::ios::binary) << mixed_log;
        slipway::remote::ConnectOptions o;
        o.host = env.at("SLIPWAY_SSH_HOST");
        o.port = std::stoi(env.at("SLIPWAY_SSH_PORT"));
        o.user = env.at("SLIPWAY_SSH_USER");
        o.identity_files = {env.at("SLIPWAY_SSH_KEY")};
        o.known_hosts_file = env.at("SLIPWAY_SSH_KNOWN_HOSTS");
        o.ssh_config_file = "none";
        o.use_agent = false;
        auto session = slipway::remote::connect_ssh(o);
        if (!session.ok()) {
            std::cerr << "follower_bench: " << session.error() << "\n";
            return 1;
        }
        rows.push_back(
            follow(**session, remote_file, mixed_log.size(), "LogFollower over SFTP (local sshd)"));
        fs::remove(remote_file);
    }

    std::printf("%-50s %9s %10s %12s %10s %10s\n", "path", "MB", "seconds", "lines", "MLLOG", "MB/s");
    for (const Row& r : rows) {
        const double mb = static_cast<double>(r.bytes) / (1 << 20);
        std::printf("%-50s %9.1f %10.3f %12lld %10lld %10.1f\n", r.what.c_str(), mb, r.seconds,
                    static_cast<long long>(r.lines), static_cast<long long>(r.events), mb / r.seconds);
    }
    return 0;
}
