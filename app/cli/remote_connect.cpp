// Session opening with terminal prompts, the profile store, run files and tables for the cluster
// subcommands (see remote_connect.h).
#include "cli/remote_connect.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "contract/mllog_keys.h"
#include "contract/run_config.h"
#include "remote/ssh/libssh_session.h"
#include "remote/ssh/prompt_text.h"
#include "remote/ssh/terminal_prompt.h"

namespace slipway::app {

Result<std::unique_ptr<remote::Session>> connect_cluster(const remote::ClusterProfile& profile,
                                                         const SshOptions& ssh) {
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

std::string input_root_for(const RunConfig& config, const std::string& given) {
    namespace fs = std::filesystem;
    if (!given.empty()) return given;
    std::error_code ec;
    const std::string cwd = fs::current_path(ec).string();
    for (const std::string* path : {&config.model.path, &config.tokenizer.path, &config.data.train_file}) {
        if (path->empty() || fs::path(*path).is_absolute()) continue;
        if (fs::exists(fs::path(cwd) / *path, ec)) return cwd;
        const std::string root = resource_root();
        if (!root.empty() && fs::exists(fs::path(root) / *path, ec)) return root;
    }
    return cwd;
}

void print_metric_event(const MllogEvent& e, std::ostream& out) {
    if (e.key != mllog_key::kTrainLoss && e.key != mllog_key::kEvalAccuracy) return;
    out << e.key << " " << format_python_json(e.value);
    if (const auto step = e.step_num()) out << " step " << static_cast<long long>(*step);
    if (const auto samples = e.samples_count()) out << " samples " << static_cast<long long>(*samples);
    out << std::endl;
}

}  // namespace slipway::app
