// ~/.ssh/config parsing, Host pattern matching, ProxyJump parsing and target resolution (see ssh_config.h).
#include "remote/ssh/ssh_config.h"

#include <glob.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

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

// Whether a %h/%n/%r/%u value may go into a ProxyCommand, which libssh runs through /bin/sh: a host or
// user from clusters.json or --host must not be able to run code locally (OpenSSH CVE-2023-51385). Only
// characters no shell interprets; brackets for an IPv6 %h; no leading '-' (it would read as an option).
bool shell_safe_token_value(const std::string& value, bool allow_brackets) {
    if (value.empty() || value[0] == '-') return false;
    for (const char c : value) {
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                        std::string_view("._:@%+-").find(c) != std::string_view::npos ||
                        (allow_brackets && (c == '[' || c == ']'));
        if (!ok) return false;
    }
    return true;
}

// The value as it can be shown in a message: control characters as '?'.
std::string printable(const std::string& value) {
    std::string out = value;
    for (char& c : out) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    return out;
}

// for_shell: the result is a command for /bin/sh (ProxyCommand), so %h %n %r %u must be shell-safe.
Result<std::string> expand_tokens(const std::string& value, const TokenValues& v, const std::string& what,
                                  bool for_shell = false) {
    const auto checked = [&](char token, const std::string& text) -> Status {
        if (!for_shell || shell_safe_token_value(text, token == 'h')) return Status::Ok();
        return Status::Error(what + ": refusing to expand %" + std::string(1, token) + " to '" +
                             printable(text) +
                             "': it must be letters, digits and ._:@%+- only, not starting with '-' (the "
                             "command runs through /bin/sh)");
    };
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
                if (Status ok = checked('u', v.local_user); !ok.ok()) return ok;
                out += v.local_user;
                break;
            case 'n':
                if (Status ok = checked('n', v.alias); !ok.ok()) return ok;
                out += v.alias;
                break;
            case 'h':
                if (Status ok = checked('h', v.hostname); !ok.ok()) return ok;
                out += v.hostname;
                break;
            case 'r':
                if (Status ok = checked('r', v.remote_user); !ok.ok()) return ok;
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

namespace {

// OpenSSH's limit (READCONF_MAX_DEPTH): a deeper nesting is a loop.
constexpr int kMaxIncludeDepth = 16;
constexpr std::uintmax_t kMaxIncludedFileBytes = 1 << 20;

const char* const kMatchWithoutArgument[] = {"all", "canonical", "final"};
const char* const kMatchWithArgument[] = {"host", "originalhost", "user",  "localuser",
                                          "exec", "localnetwork", "tagged"};

bool one_of(const std::string& word, const char* const* first, const char* const* last) {
    return std::find_if(first, last, [&](const char* k) { return word == k; }) != last;
}

Result<std::vector<SshMatchCriterion>> parse_match(const std::vector<std::string>& words,
                                                   const std::string& where) {
    using R = Result<std::vector<SshMatchCriterion>>;
    std::vector<SshMatchCriterion> criteria;
    for (std::size_t i = 0; i < words.size(); ++i) {
        SshMatchCriterion c;
        c.keyword = lower(words[i]);
        if (!c.keyword.empty() && c.keyword[0] == '!') {
            c.negated = true;
            c.keyword.erase(0, 1);
        }
        if (one_of(c.keyword, std::begin(kMatchWithArgument), std::end(kMatchWithArgument))) {
            if (i + 1 >= words.size()) return R::Error(where + ": Match " + c.keyword + " needs an argument");
            c.argument = words[++i];
        } else if (!one_of(c.keyword, std::begin(kMatchWithoutArgument), std::end(kMatchWithoutArgument))) {
            return R::Error(where + ": Match criterion '" + words[i] + "' is not one OpenSSH knows");
        }
        criteria.push_back(c);
    }
    if (criteria.empty()) return R::Error(where + ": Match needs a criterion (e.g. Match host login*)");
    const bool has_all = std::any_of(criteria.begin(), criteria.end(),
                                     [](const SshMatchCriterion& c) { return c.keyword == "all"; });
    const bool only_all = std::all_of(criteria.begin(), criteria.end(), [](const SshMatchCriterion& c) {
        return c.keyword == "all" || c.keyword == "canonical" || c.keyword == "final";
    });
    if (has_all && !only_all) return R::Error(where + ": Match all cannot be combined with other criteria");
    return criteria;
}

// Reads one file's lines into config.blocks; `within` is the block an Include line of an outer file was in.
class ConfigReader {
public:
    ConfigReader(SshConfig& config, std::string home) : config_(config), home_(std::move(home)) {}

    Status read(const std::string& text, const std::string& file_name, int depth, int within) {
        // Lines before the first Host/Match of a file belong to the enclosing block's condition.
        config_.blocks.push_back({{"*"}, {}, {}, file_name, 0, within});
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
                if (words->empty()) return Status::Error(where + ": Host needs at least one pattern");
                config_.blocks.push_back({*words, {}, {}, file_name, line_no, within});
                continue;
            }
            if (keyword == "match") {
                auto criteria = parse_match(*words, where);
                if (!criteria) return criteria.status();
                config_.blocks.push_back({{}, *criteria, {}, file_name, line_no, within});
                continue;
            }
            if (words->empty()) return Status::Error(where + ": " + keyword + " needs a value");
            if (keyword == "include") {
                if (Status s = include(*words, where, depth); !s) return s;
                continue;
            }
            if (keyword == "port") {
                int port = 0;
                if (!parse_port((*words)[0], &port)) {
                    return Status::Error(where + ": Port '" + (*words)[0] +
                                         "' is not a port number (1-65535)");
                }
            }
            // ProxyJump is a list and ProxyCommand a shell command: both keep the whole value.
            const bool whole = keyword == "proxyjump" || keyword == "proxycommand";
            config_.blocks.back().options.push_back({keyword, whole ? value : (*words)[0], line_no});
        }
        return Status::Ok();
    }

private:
    // Include reads every file its globs match, in the place of the Include line: what they say applies
    // only where the block holding the Include applies. Relative paths are under ~/.ssh (as for the user
    // config in OpenSSH); a glob that matches nothing is not an error (OpenSSH ignores it too).
    Status include(const std::vector<std::string>& patterns, const std::string& where, int depth) {
        if (depth + 1 >= kMaxIncludeDepth) {
            return Status::Error(where + ": Include nests more than " + std::to_string(kMaxIncludeDepth) +
                                 " files deep (does a file include itself?)");
        }
        const int holder = static_cast<int>(config_.blocks.size()) - 1;
        const SshConfigBlock holder_block = config_.blocks[holder];
        for (const std::string& pattern : patterns) {
            std::string path = pattern;
            const bool from_home = path == "~" || path.rfind("~/", 0) == 0;
            if ((from_home || path.empty() || path[0] != '/') && home_.empty()) {
                return Status::Error(where + ": Include '" + pattern +
                                     "': no home folder to resolve it against");
            }
            if (from_home)
                path = home_ + path.substr(1);
            else if (path[0] != '/')
                path = home_ + "/.ssh/" + path;
            glob_t found{};
            const int rc = ::glob(path.c_str(), 0, nullptr, &found);
            if (rc != 0 && rc != GLOB_NOMATCH) {
                ::globfree(&found);
                return Status::Error(where + ": Include '" + pattern + "': cannot list " + path);
            }
            std::vector<std::string> files(found.gl_pathv, found.gl_pathv + found.gl_pathc);
            ::globfree(&found);
            for (const std::string& file : files) {
                std::error_code ec;
                if (std::filesystem::is_directory(file, ec))
                    continue;  // "Include conf.d/*" lists folders too
                // Only plain, config-sized files: never a device or a FIFO that would block or never end.
                if (!std::filesystem::is_regular_file(file, ec) ||
                    std::filesystem::file_size(file, ec) > kMaxIncludedFileBytes) {
                    return Status::Error(where + ": Include '" + pattern + "': " + file +
                                         " is not a regular file of at most 1 MiB");
                }
                std::ifstream in(file);
                if (!in) return Status::Error(where + ": Include '" + pattern + "': cannot read " + file);
                std::ostringstream text;
                text << in.rdbuf();
                // An error inside names both places: "config:3: Include 'x': /home/me/.ssh/x:7: ...".
                if (Status s = read(text.str(), file, depth + 1, holder); !s)
                    return Status::Error(where + ": Include '" + pattern + "': " + s.message());
            }
        }
        // The lines after the Include continue the holder's block (a copy keeps the file order of options).
        SshConfigBlock rest = holder_block;
        rest.options.clear();
        config_.blocks.push_back(rest);
        return Status::Ok();
    }

    SshConfig& config_;
    const std::string home_;
};

// Replaces %h (and %%) the way OpenSSH does before matching `Match host` against a HostName.
std::string hostname_for_match(const std::string& hostname, const std::string& alias) {
    std::string out;
    for (std::size_t i = 0; i < hostname.size(); ++i) {
        if (hostname[i] == '%' && i + 1 < hostname.size() &&
            (hostname[i + 1] == 'h' || hostname[i + 1] == '%')) {
            out += hostname[++i] == 'h' ? alias : "%";
        } else {
            out += hostname[i];
        }
    }
    return out;
}

}  // namespace

Result<SshConfig> parse_ssh_config(const std::string& text, const std::string& file_name,
                                   const std::string& home) {
    SshConfig config;
    config.file = file_name;
    ConfigReader reader(config, home);
    if (Status s = reader.read(text, file_name, 0, -1); !s) return s;
    return config;
}

Result<SshConfig> load_ssh_config(const std::string& path, const std::string& home) {
    std::ifstream in(path);
    if (!in) {
        SshConfig empty;
        empty.file = path;
        return empty;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_ssh_config(text.str(), path, home);
}

Result<SshHostConfig> SshConfig::lookup(const std::string& host) const {
    SshHostConfig result;
    bool proxy_chosen = false;  // ProxyJump or ProxyCommand seen: the first one wins
    std::vector<char> applies(blocks.size(), 0);
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        const SshConfigBlock& block = blocks[b];
        if (block.included_from >= 0 && !applies[block.included_from]) continue;
        if (block.match.empty()) {
            if (!ssh_host_matches(block.patterns, host)) continue;
        } else {
            // Match host sees the HostName given so far (%h expanded), originalhost the name as typed.
            const std::string hostname =
                result.hostname.empty() ? host : hostname_for_match(result.hostname, host);
            bool holds = true;
            std::string cannot_evaluate;
            for (const SshMatchCriterion& c : block.match) {
                bool matched = false;
                if (c.keyword == "all") {
                    matched = true;
                } else if (c.keyword == "host") {
                    matched = ssh_host_matches({c.argument}, hostname);
                } else if (c.keyword == "originalhost") {
                    matched = ssh_host_matches({c.argument}, host);
                } else {
                    cannot_evaluate = c.keyword;
                    continue;
                }
                if (matched == c.negated) holds = false;
            }
            if (!holds) continue;
            if (!cannot_evaluate.empty()) {
                return Result<SshHostConfig>::Error(
                    block.file + ":" + std::to_string(block.line) + ": Match " + cannot_evaluate +
                    " is not supported by Slipway, and this block may apply to host '" + host +
                    "'; rewrite it as Host or Match host/originalhost/all, or give the values in the cluster "
                    "profile");
            }
        }
        applies[b] = 1;
        for (const auto& [keyword, value, line] : block.options) {
            if (keyword == "hostname" && result.hostname.empty()) result.hostname = value;
            if (keyword == "user" && result.user.empty()) result.user = value;
            if (keyword == "port" && result.port == 0) result.port = std::stoi(value);
            if (keyword == "identityfile") result.identity_files.push_back(value);
            if (keyword == "proxyjump" && !proxy_chosen) {
                result.proxy_jump = value;
                proxy_chosen = true;
            }
            if (keyword == "proxycommand" && !proxy_chosen) {
                result.proxy_command = value;
                result.proxy_command_where = block.file + ":" + std::to_string(line);
                proxy_chosen = true;
            }
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
    const Result<SshHostConfig> lookup = config.lookup(options.host);
    if (!lookup) return lookup.status();
    const SshHostConfig& found = *lookup;
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

    // Hops named in the options win over the config's ProxyJump and ProxyCommand (as ssh -J does);
    // "none" there turns off the config's ProxyJump only.
    const bool explicit_hops = !options.proxy_jump.empty() && lower(options.proxy_jump) != "none";
    const std::string jump = !options.proxy_jump.empty() ? options.proxy_jump : found.proxy_jump;
    auto jumps = parse_proxy_jump(jump);
    if (!jumps) return jumps.status();
    target.jumps = *jumps;
    if (!explicit_hops && !found.proxy_command.empty() && lower(found.proxy_command) != "none") {
        auto command =
            expand_tokens(found.proxy_command, tokens, found.proxy_command_where + ": ProxyCommand", true);
        if (!command) return command.status();
        target.proxy_command = *command;
    }

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
