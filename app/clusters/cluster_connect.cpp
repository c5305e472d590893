// A profile's SSH options for the app and the CLI (see cluster_connect.h).
#include "clusters/cluster_connect.h"

#include <cstdlib>

namespace slipway::app {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
    const char* value = std::getenv(name);
    return value && *value ? std::string(value) : fallback;
}

}  // namespace

remote::ConnectOptions connect_options(const remote::ClusterProfile& profile, const SshOptions& ssh) {
    remote::ConnectOptions o;
    o.host = profile.host;
    o.port = profile.port.value_or(0);
    o.user = profile.user;
    if (!profile.identity_file.empty()) o.identity_files.push_back(profile.identity_file);
    o.proxy_jump = profile.proxy_jump;
    o.known_hosts_file = ssh.known_hosts.empty() ? env_or("SLIPWAY_KNOWN_HOSTS", "") : ssh.known_hosts;
    o.ssh_config_file = ssh.ssh_config.empty() ? env_or("SLIPWAY_SSH_CONFIG", "") : ssh.ssh_config;
    o.connect_timeout = std::chrono::seconds(ssh.connect_timeout_s);
    return o;
}

}  // namespace slipway::app
