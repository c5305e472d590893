// For tests against the local cluster (tests/cluster/start_cluster.sh): reads STATE_DIR/cluster.env,
// named by SLIPWAY_CLUSTER_ENV, and builds ConnectOptions for the test sshd. Tests skip when the cluster
// did not start (e.g. not root).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "remote/ssh/session.h"

namespace slipway::remote::testing {

class ClusterEnv {
public:
    static std::optional<ClusterEnv> load() {
        const char* path = std::getenv("SLIPWAY_CLUSTER_ENV");
        if (path == nullptr) return std::nullopt;
        std::ifstream in(path);
        if (!in) return std::nullopt;
        ClusterEnv env;
        std::string line;
        while (std::getline(in, line)) {
            const auto eq = line.find('=');
            if (eq != std::string::npos) env.values_[line.substr(0, eq)] = line.substr(eq + 1);
        }
        return env;
    }
    std::string operator[](const std::string& key) const {
        auto it = values_.find(key);
        return it == values_.end() ? std::string() : it->second;
    }
    int port() const { return std::stoi((*this)["SLIPWAY_SSH_PORT"]); }

    // Direct connection to the test sshd with the test key and known_hosts; no ~/.ssh/config, no agent.
    ConnectOptions connect_options() const {
        ConnectOptions options;
        options.host = (*this)["SLIPWAY_SSH_HOST"];
        options.port = port();
        options.user = (*this)["SLIPWAY_SSH_USER"];
        options.identity_files = {(*this)["SLIPWAY_SSH_KEY"]};
        options.known_hosts_file = (*this)["SLIPWAY_SSH_KNOWN_HOSTS"];
        options.ssh_config_file = "none";
        options.use_agent = false;
        options.connect_timeout = std::chrono::milliseconds(5000);
        return options;
    }

private:
    std::map<std::string, std::string> values_;
};

// Runs a local command (through sh) and returns its stdout.
inline std::string run_local(const std::string& command) {
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return "";
    std::string out;
    std::array<char, 4096> buffer{};
    std::size_t n = 0;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
        out.append(buffer.data(), n);
    pclose(pipe);
    return out;
}

// A fresh local folder for one test's files (keys, known_hosts copies).
inline std::string make_local_temp_dir(const std::string& name) {
    std::string pattern = "/tmp/slipway-" + name + "-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return "";
    return pattern;
}

}  // namespace slipway::remote::testing

#define SLIPWAY_REQUIRE_CLUSTER(env)                                                              \
    auto env##_loaded = ::slipway::remote::testing::ClusterEnv::load();                           \
    if (!env##_loaded) GTEST_SKIP() << "local cluster not running (SLIPWAY_CLUSTER_ENV not set)"; \
    const ::slipway::remote::testing::ClusterEnv& env = *env##_loaded
