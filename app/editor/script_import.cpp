// Seed-style script import: join continuation lines, collect VAR=value assignments, find the training
// command, map torchrun's shape flags and the script's HF flags.
#include "editor/script_import.h"

#include <cctype>
#include <sstream>

#include "contract/hf_flags.h"

namespace slipway::app {
namespace {

using Vars = std::vector<std::pair<std::string, std::string>>;

const std::string* lookup(const Vars& vars, const std::string& name) {
    for (auto it = vars.rbegin(); it != vars.rend(); ++it) {
        if (it->first == name) return &it->second;
    }
    return nullptr;
}

// Logical lines: a trailing backslash joins the next line; comments dropped.
std::vector<std::string> logical_lines(const std::string& script) {
    std::vector<std::string> out;
    std::string current;
    std::istringstream in(script);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const size_t first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line[first] == '#' && current.empty()) continue;
        if (!line.empty() && line.back() == '\\') {
            current += line.substr(0, line.size() - 1) + " ";
            continue;
        }
        current += line;
        out.push_back(current);
        current.clear();
    }
    if (!current.empty()) out.push_back(current);
    return out;
}

bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

}  // namespace

std::vector<std::string> shell_words(const std::string& line, const Vars& vars) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quote == '\'') {
            if (c == '\'')
                quote = 0;
            else
                word += c;
            continue;
        }
        if (c == '\\' && i + 1 < line.size()) {
            word += line[++i];
            in_word = true;
            continue;
        }
        if (c == '$' && i + 1 < line.size() && (line[i + 1] == '{' || is_name_char(line[i + 1]))) {
            size_t end;
            std::string name;
            if (line[i + 1] == '{') {
                end = line.find('}', i + 2);
                if (end == std::string::npos) end = line.size() - 1;
                name = line.substr(i + 2, end - i - 2);
            } else {
                end = i + 1;
                while (end + 1 < line.size() && is_name_char(line[end + 1]))
                    ++end;
                name = line.substr(i + 1, end - i);
            }
            if (const std::string* value = lookup(vars, name))
                word += *value;
            else
                word += line.substr(i, end - i + 1);
            i = end;
            in_word = true;
            continue;
        }
        if (quote == '"') {
            if (c == '"')
                quote = 0;
            else
                word += c;
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
            continue;
        }
        if (c == ' ' || c == '\t') {
            if (in_word) words.push_back(word);
            word.clear();
            in_word = false;
            continue;
        }
        word += c;
        in_word = true;
    }
    if (in_word) words.push_back(word);
    return words;
}

Result<ScriptImport> import_training_script(const std::string& script, const RunConfig& base) {
    ScriptImport result;
    result.config = base;
    Vars vars;
    std::vector<std::string> command;
    for (const std::string& line : logical_lines(script)) {
        std::vector<std::string> words = shell_words(line, vars);
        if (words.empty()) continue;
        if (words[0] == "export" && words.size() > 1) words.erase(words.begin());
        // NAME=value alone on a line: a shell variable the command may use.
        const size_t eq = words[0].find('=');
        if (words.size() == 1 && eq != std::string::npos && eq > 0 &&
            std::all_of(words[0].begin(), words[0].begin() + static_cast<long>(eq), is_name_char)) {
            vars.emplace_back(words[0].substr(0, eq), words[0].substr(eq + 1));
            continue;
        }
        for (size_t i = 0; i < words.size(); ++i) {
            const std::string& w = words[i];
            if (w.size() > 3 && w.compare(w.size() - 3, 3, ".py") == 0) {
                command.assign(words.begin(), words.end());
                break;
            }
        }
        if (!command.empty()) break;
    }
    if (command.empty()) {
        return Result<ScriptImport>::Error(
            "no training command (torchrun or python running a .py file) in the script");
    }
    size_t script_at = 0;
    while (!(command[script_at].size() > 3 &&
             command[script_at].compare(command[script_at].size() - 3, 3, ".py") == 0))
        ++script_at;
    // Launcher flags before the script: the job's shape.
    for (size_t i = 0; i < script_at; ++i) {
        std::string flag = command[i];
        std::string value;
        if (const size_t eq = flag.find('='); eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
        } else if (i + 1 < script_at) {
            value = command[i + 1];
        }
        std::replace(flag.begin(), flag.end(), '_', '-');
        const bool numeric = !value.empty() && std::all_of(value.begin(), value.end(), ::isdigit);
        if (flag == "--nnodes" || flag == "--nproc-per-node") {
            if (!numeric) {
                result.notes.push_back(flag + " " + value +
                                       " ignored: not a number (a variable the script does not set)");
                continue;
            }
            (flag == "--nnodes" ? result.config.slurm.nodes : result.config.slurm.gpus_per_node) =
                std::stoll(value);
        }
    }
    // The script's flags; a value still holding "$" names a variable the script never set: skip the flag.
    std::vector<std::string> args;
    for (size_t i = script_at + 1; i < command.size(); ++i) {
        const std::string& w = command[i];
        const bool is_flag = w.rfind("--", 0) == 0;
        const bool has_value = is_flag && w.find('=') == std::string::npos && i + 1 < command.size() &&
                               command[i + 1].rfind("--", 0) != 0;
        const std::string value = has_value ? command[i + 1] : (w.find('=') != std::string::npos ? w : "");
        if (is_flag && value.find('$') != std::string::npos) {
            result.notes.push_back(w + " skipped: " + value + " is not set in the script");
            if (has_value) ++i;
            continue;
        }
        args.push_back(w);
    }
    Result<FlagReport> report = apply_hf_flags(result.config, args);
    if (!report.ok()) return report.status();
    result.notes.insert(result.notes.end(), report->notes.begin(), report->notes.end());
    return result;
}

}  // namespace slipway::app
