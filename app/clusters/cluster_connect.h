// How the app and the CLI reach a cluster's login node: a profile's SSH options with the overrides both
// doors share (known_hosts and ssh config files from the command line or the environment, the connect
// timeout). The CLI adds its terminal prompts (cli/remote_connect.h); the app its dialogs.
#pragma once

#include <string>

#include "remote/slurm/cluster_profile.h"
#include "remote/ssh/session.h"

namespace slipway::app {

// How to reach and trust the cluster's login node; shared by every subcommand that
// connects and by the app's cluster sessions (with the defaults).
struct SshOptions {
    bool batch = false;       // never ask: unknown host keys and passphrases are refused
    std::string known_hosts;  // --known-hosts, else $SLIPWAY_KNOWN_HOSTS, else ~/.ssh/known_hosts
    std::string ssh_config;   // --ssh-config, else $SLIPWAY_SSH_CONFIG, else ~/.ssh/config
    int connect_timeout_s = 15;
};

// The ConnectOptions of a profile with `ssh`'s overrides (known_hosts, ssh config, timeout).
remote::ConnectOptions connect_options(const remote::ClusterProfile& profile, const SshOptions& ssh = {});

}  // namespace slipway::app
