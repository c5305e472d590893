// Session opening and local paths for the cluster subcommands (see remote_connect.h).
#include "cli/remote_connect.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "contract/run_config.h"
#include "remote/ssh/libssh_session.h"
#include "remote/ssh/prompt_text.h"
#include "remote/ssh/terminal_prompt.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& fallback) {
    const char* value = std::getenv(name);
    return value && *value ? std::string(value) : fallback;
}

}  // namespace

remote::ConnectOptions connect_options(const remote::ClusterProfile& profile, const SshCliOptions& ssh) {
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

Result<std::unique_ptr<remote::Session>> connect_cluster(const remote::ClusterProfile& profile,
                                                         const SshCliOptions& ssh) {
    remote::SessionCallbacks callbacks;
    if (!ssh.batch) {
        callbacks.unknown_host_key = [](const remote::HostKeyInfo& key) {
            std::cerr << "The authenticity of host " << key.host << " can't be established.\n"
                      << key.key_type << " key fingerprint is " << key.sha256_fingerprint << ".\n";
            const std::optional<std::string> answer = remote::ask_terminal(
                "Trust it? [y]es and save to " + key.known_hosts_file + ", [o]nce, [N]o: ", false);
            if (!answer) return remote::HostKeyDecision::kReject;
            if (*answer == "y" || *answer == "yes") return remote::HostKeyDecision::kAcceptAndSave;
            if (*answer == "o" || *answer == "once") return remote::HostKeyDecision::kAcceptOnce;
            return remote::HostKeyDecision::kReject;
        };
        callbacks.passphrase = [](const std::string& key_file) {
            return remote::ask_terminal("Passphrase for " + key_file + ": ", true);
        };
        callbacks.password = [](const std::string& user, const std::string& host) {
            return remote::ask_terminal(user + "@" + host + "'s password: ", true);
        };
        callbacks.banner = [](const std::string& text) { std::cerr << remote::printable_prompt_text(text); };
        callbacks.keyboard_interactive = [](const std::string& name, const std::string& instruction,
                                            const std::vector<remote::InteractivePrompt>& prompts)
            -> std::optional<std::vector<std::string>> {
            // The server chose these texts: shown with its control characters and escapes removed.
            if (!name.empty()) std::cerr << remote::printable_prompt_text(name) << "\n";
            if (!instruction.empty()) std::cerr << remote::printable_prompt_text(instruction) << "\n";
            std::vector<std::string> answers;
            for (const remote::InteractivePrompt& p : prompts) {
                std::optional<std::string> a =
                    remote::ask_terminal(remote::printable_prompt_text(p.text), !p.echo);
                if (!a) return std::nullopt;
                answers.push_back(*a);
            }
            return answers;
        };
    }
    return remote::connect_ssh(connect_options(profile, ssh), callbacks);
}

remote::ProfileStore profile_store(const RemoteCommands& commands) {
    return commands.clusters_file.empty() ? remote::ProfileStore()
                                          : remote::ProfileStore(commands.clusters_file);
}

std::string resource_root() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    std::vector<fs::path> candidates;
    if (!ec) {
        candidates.push_back(exe.parent_path() / ".." / "..");                 // <source>/build/bin
        candidates.push_back(exe.parent_path() / ".." / "share" / "slipway");  // <prefix>/bin
    }
    candidates.emplace_back(SLIPWAY_SOURCE_DIR);
    for (const fs::path& dir : candidates) {
        if (fs::exists(dir / "resources" / "presets" / "demo-tiny.json", ec))
            return fs::canonical(dir, ec).string();
    }
    return "";
}

std::string engine_next_to_slipway() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return "";
    const fs::path engine = exe.parent_path() / "slipway-engine";
    return fs::is_regular_file(engine, ec) ? engine.string() : "";
}

Result<RunConfig> load_run_file(const std::string& path) {
    Result<nlohmann::json> document = read_run_document(path);
    if (!document.ok()) return document.status();
    ParsedRunConfig parsed = parse_run_config(*document);
    ConfigProblems problems = parsed.problems;
    for (ConfigProblem& p : validate(parsed.config))
        problems.push_back(p);
    if (has_errors(problems)) return Status::Error(path + ":\n" + format_problems(problems));
    return parsed.config;
}

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> widths;
    for (const auto& row : rows) {
        if (widths.size() < row.size()) widths.resize(row.size(), 0);
        for (size_t i = 0; i < row.size(); ++i)
            widths[i] = std::max(widths[i], row[i].size());
    }
    for (const auto& row : rows) {
        std::string line;
        for (size_t i = 0; i < row.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
        }
        out << line << "\n";
    }
}

}  // namespace slipway::app
