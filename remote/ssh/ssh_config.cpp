// ~/.ssh/config parsing, Host pattern matching, ProxyJump parsing and target resolution (see ssh_config.h).
#include "remote/ssh/ssh_config.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace slipway::remote {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// Splits a value into words: whitespace-separated, "double quotes" group a word with spaces.
Result<std::vector<std::string>> split_words(const std::string& text, const std::string& where) {
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
            ++i;
        if (i >= text.size()) break;
        std::string word;
        if (text[i] == '"') {
            const std::size_t close = text.find('"', i + 1);
            if (close == std::string::npos)
                return Result<std::vector<std::string>>::Error(where + ": unterminated quote");
            word = text.substr(i + 1, close - i - 1);
            i = close + 1;
        } else {
            while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])))
                word += text[i++];
        }
        words.push_back(word);
    }
    return words;
}

// Glob match with * and ? (OpenSSH match_pattern).
bool glob_match(const char* pattern, const char* text) {
    for (;; ++pattern, ++text) {
        if (*pattern == '\0') return *text == '\0';
        if (*pattern == '*') {
            while (*pattern == '*')
                ++pattern;
            if (*pattern == '\0') return true;
            for (; *text; ++text) {
                if (glob_match(pattern, text)) return true;
            }
            return false;
        }
        if (*text == '\0') return false;
        if (*pattern != '?' && std::tolower(static_cast<unsigned char>(*pattern)) !=
                                   std::tolower(static_cast<unsigned char>(*text))) {
            return false;
        }
    }
}

bool parse_port(const std::string& text, int* port) {
    if (text.empty() || text.size() > 5 || !std::all_of(text.begin(), text.end(), ::isdigit)) return false;
    *port = std::stoi(text);
    return *port > 0 && *port < 65536;
}

// Expands ~ and the OpenSSH tokens Slipway supports in paths and HostName.
struct TokenValues {
    std::string home, local_user, alias, hostname, remote_user;
    int port = 22;
};

Result<std::string> expand_tokens(const std::string& value, const TokenValues& v, const std::string& what) {
    std::string out;
    std::size_t start = 0;
    if (value == "~" || value.rfind("~/", 0) == 0) {
        out = v.home;
        start = 1;
    }
    for (std::size_t i = start; i < value.size(); ++i) {
        if (value[i] != '%') {
            out += value[i];
            continue;
        }
        if (i + 1 >= value.size())
            return Result<std::string>::Error(what + " '" + value + "': ends with a lone %");
        switch (value[++i]) {
            case '%':
                out += '%';
                break;
            case 'd':
                out += v.home;
                break;
            case 'u':
                out += v.local_user;
                break;
            case 'n':
                out += v.alias;
                break;
            case 'h':
                out += v.hostname;
                break;
            case 'r':
                out += v.remote_user;
                break;
            case 'p':
                out += std::to_string(v.port);
                break;
            default:
                return Result<std::string>::Error(what + " '" + value + "': token %" +
                                                  std::string(1, value[i]) +
                                                  " is not supported (use %d %u %n %h %r %p %%)");
        }
    }
    return out;
}

}  // namespace

bool ssh_host_matches(const std::vector<std::string>& patterns, const std::string& host) {
    bool matched = false;
    for (const std::string& list : patterns) {
        std::stringstream items(list);
        std::string pattern;
        while (std::getline(items, pattern, ',')) {
            if (pattern.empty()) continue;
            const bool negated = pattern[0] == '!';
            if (negated) pattern.erase(0, 1);
            if (glob_match(pattern.c_str(), host.c_str())) {
                if (negated) return false;
                matched = true;
            }
        }
    }
    return matched;
}

Result<SshConfig> parse_ssh_config(const std::string& text, const std::string& file_name) {
    SshConfig config;
    config.file = file_name;
    config.blocks.push_back({{"*"}, {}, 0});  // options before any Host line apply to every host
    bool in_match_block = false;
    std::istringstream lines(text);
    std::string line;
    int line_no = 0;
    while (std::getline(lines, line)) {
        ++line_no;
        const std::string where = file_name + ":" + std::to_string(line_no);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::size_t i = 0;
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])))
            ++i;
        if (i == line.size() || line[i] == '#') continue;
        std::size_t key_end = i;
        while (key_end < line.size() && !std::isspace(static_cast<unsigned char>(line[key_end])) &&
               line[key_end] != '=') {
            ++key_end;
        }
        const std::string keyword = lower(line.substr(i, key_end - i));
        std::size_t value_start = key_end;
        while (value_start < line.size() && std::isspace(static_cast<unsigned char>(line[value_start])))
            ++value_start;
        if (value_start < line.size() && line[value_start] == '=') ++value_start;
        std::string value = line.substr(value_start);
        while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
            value.pop_back();
        while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front())))
            value.erase(0, 1);

        auto words = split_words(value, where);
        if (!words) return words.status();
        if (keyword == "host") {
            if (words->empty()) return Result<SshConfig>::Error(where + ": Host needs at least one pattern");
            config.blocks.push_back({*words, {}, line_no});
            in_match_block = false;
            continue;
        }
        if (keyword == "match") {
            config.warnings.push_back(where + ": Match blocks are not supported; their options are ignored");
            in_match_block = true;
            continue;
        }
        if (in_match_block) continue;
        if (keyword == "include") {
            config.warnings.push_back(where + ": Include is not supported; '" + value + "' was not read");
            continue;
        }
        if (words->empty()) return Result<SshConfig>::Error(where + ": " + keyword + " needs a value");
        if (keyword == "port") {
            int port = 0;
            if (!parse_port((*words)[0], &port)) {
                return Result<SshConfig>::Error(where + ": Port '" + (*words)[0] +
                                                "' is not a port number (1-65535)");
            }
        }
        config.blocks.back().options.emplace_back(keyword, keyword == "proxyjump" ? value : (*words)[0]);
    }
    return config;
}

Result<SshConfig> load_ssh_config(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        SshConfig empty;
        empty.file = path;
        return empty;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_ssh_config(text.str(), path);
}

SshHostConfig SshConfig::lookup(const std::string& host) const {
    SshHostConfig result;
    for (const SshConfigBlock& block : blocks) {
        if (!ssh_host_matches(block.patterns, host)) continue;
        for (const auto& [keyword, value] : block.options) {
            if (keyword == "hostname" && result.hostname.empty()) result.hostname = value;
            if (keyword == "user" && result.user.empty()) result.user = value;
            if (keyword == "port" && result.port == 0) result.port = std::stoi(value);
            if (keyword == "identityfile") result.identity_files.push_back(value);
            if (keyword == "proxyjump" && result.proxy_jump.empty()) result.proxy_jump = value;
            if (keyword == "userknownhostsfile" && result.user_known_hosts_file.empty()) {
                result.user_known_hosts_file = value;
            }
        }
    }
    return result;
}

Result<std::vector<JumpHost>> parse_proxy_jump(const std::string& value) {
    std::vector<JumpHost> hops;
    if (value.empty() || lower(value) == "none") return hops;
    std::stringstream items(value);
    std::string item;
    while (std::getline(items, item, ',')) {
        const std::string where = "ProxyJump '" + value + "'";
        if (item.rfind("ssh://", 0) == 0) item.erase(0, 6);
        JumpHost hop;
        const std::size_t at = item.rfind('@');
        if (at != std::string::npos) {
            hop.user = item.substr(0, at);
            item.erase(0, at + 1);
        }
        // [v6addr]:port, host:port or host
        if (!item.empty() && item[0] == '[') {
            const std::size_t close = item.find(']');
            if (close == std::string::npos)
                return Result<std::vector<JumpHost>>::Error(where + ": unclosed [");
            hop.host = item.substr(1, close - 1);
            item.erase(0, close + 1);
            if (!item.empty() && item[0] == ':')
                item.erase(0, 1);
            else if (!item.empty())
                return Result<std::vector<JumpHost>>::Error(where + ": text after ]");
            if (!item.empty() && !parse_port(item, &hop.port)) {
                return Result<std::vector<JumpHost>>::Error(where + ": '" + item + "' is not a port number");
            }
        } else {
            const std::size_t colon = item.find(':');
            hop.host = item.substr(0, colon);
            if (colon != std::string::npos && !parse_port(item.substr(colon + 1), &hop.port)) {
                return Result<std::vector<JumpHost>>::Error(where + ": '" + item.substr(colon + 1) +
                                                            "' is not a port number");
            }
        }
        if (hop.host.empty()) return Result<std::vector<JumpHost>>::Error(where + ": a hop has no host");
        hops.push_back(hop);
    }
    return hops;
}

Result<SshTarget> resolve_ssh_target(const ConnectOptions& options, const SshConfig& config,
                                     const std::string& home, const std::string& local_user) {
    if (options.host.empty()) return Result<SshTarget>::Error("ssh: no host given");
    const SshHostConfig found = config.lookup(options.host);
    SshTarget target;
    target.alias = options.host;
    target.port = options.port > 0 ? options.port : (found.port > 0 ? found.port : 22);
    target.user = !options.user.empty() ? options.user : (!found.user.empty() ? found.user : local_user);
    TokenValues tokens{home, local_user, options.host, options.host, target.user, target.port};
    if (!found.hostname.empty()) {
        auto hostname = expand_tokens(found.hostname, tokens, config.file + ": HostName for " + options.host);
        if (!hostname) return hostname.status();
        target.hostname = *hostname;
    } else {
        target.hostname = options.host;
    }
    tokens.hostname = target.hostname;

    std::vector<std::string> identities = options.identity_files;
    identities.insert(identities.end(), found.identity_files.begin(), found.identity_files.end());
    if (identities.empty()) identities = {"~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa"};
    for (const std::string& identity : identities) {
        auto path = expand_tokens(identity, tokens, "IdentityFile for " + options.host);
        if (!path) return path.status();
        if (std::find(target.identity_files.begin(), target.identity_files.end(), *path) ==
            target.identity_files.end()) {
            target.identity_files.push_back(*path);
        }
    }

    const std::string jump = !options.proxy_jump.empty() ? options.proxy_jump : found.proxy_jump;
    auto jumps = parse_proxy_jump(jump);
    if (!jumps) return jumps.status();
    target.jumps = *jumps;

    std::string known_hosts =
        !options.known_hosts_file.empty() ? options.known_hosts_file : found.user_known_hosts_file;
    if (known_hosts.empty()) known_hosts = "~/.ssh/known_hosts";
    auto known_hosts_path = expand_tokens(known_hosts, tokens, "UserKnownHostsFile for " + options.host);
    if (!known_hosts_path) return known_hosts_path.status();
    target.known_hosts_file = *known_hosts_path;
    target.connect_timeout = options.connect_timeout;
    target.keepalive_interval = options.keepalive_interval;
    return target;
}

std::string local_home_dir() {
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return home;
    if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr) return pw->pw_dir;
    return "/";
}

std::string local_user_name() {
    if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_name != nullptr) return pw->pw_name;
    if (const char* user = std::getenv("USER"); user != nullptr) return user;
    return "root";
}

}  // namespace slipway::remote
