// Reads Dockerfiles into instructions, shell words and commands (see dockerfile_reader.h).
#include "remote/container/dockerfile_reader.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include <nlohmann/json.hpp>

namespace slipway::remote::dockerfile {

std::string trim(const std::string& s) {
    const size_t first = s.find_first_not_of(" \t");
    if (first == std::string::npos) return std::string();
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

int Instruction::line_of(size_t offset) const {
    int line_number = line;
    for (const auto& [start, number] : starts) {
        if (start <= offset) line_number = number;
    }
    return line_number;
}

// Comment and blank lines are skipped inside continuations too, as docker does.
std::vector<Instruction> read_instructions(const std::string& text) {
    std::vector<Instruction> out;
    std::istringstream in(text);
    std::string raw;
    int number = 0;
    bool continued = false;
    while (std::getline(in, raw)) {
        ++number;
        if (!raw.empty() && raw.back() == '\r') raw.pop_back();
        std::string body = trim(raw);
        if (body.empty() || body[0] == '#') continue;
        const bool continues = body.back() == '\\';
        if (continues) body = trim(body.substr(0, body.size() - 1));
        if (!continued) {
            Instruction instruction;
            instruction.line = number;
            const size_t space = body.find_first_of(" \t");
            instruction.keyword = body.substr(0, space);
            instruction.written_upper = std::none_of(instruction.keyword.begin(), instruction.keyword.end(),
                                                     [](unsigned char c) { return std::islower(c); });
            std::transform(instruction.keyword.begin(), instruction.keyword.end(),
                           instruction.keyword.begin(), [](unsigned char c) { return std::toupper(c); });
            instruction.args = space == std::string::npos ? std::string() : trim(body.substr(space));
            instruction.starts.emplace_back(0, number);
            out.push_back(std::move(instruction));
        } else {
            Instruction& open = out.back();
            open.args += ' ';
            open.starts.emplace_back(open.args.size(), number);
            open.args += body;
        }
        continued = continues;
    }
    return out;
}

// Shell words of a RUN line: quotes and backslashes honoured, control operators as their own words.
std::vector<Word> shell_words(const std::string& s) {
    std::vector<Word> words;
    size_t i = 0;
    auto is_operator_char = [](char c) { return c == '&' || c == '|' || c == ';' || c == '(' || c == ')'; };
    while (i < s.size()) {
        if (std::isspace(static_cast<unsigned char>(s[i]))) {
            ++i;
            continue;
        }
        Word w;
        w.offset = i;
        if (is_operator_char(s[i])) {
            w.is_operator = true;
            w.text =
                s.substr(i, (i + 1 < s.size() && s[i + 1] == s[i] && (s[i] == '&' || s[i] == '|')) ? 2 : 1);
            i += w.text.size();
            words.push_back(std::move(w));
            continue;
        }
        while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && !is_operator_char(s[i])) {
            const char c = s[i];
            if (c == '\'') {
                const size_t end = s.find('\'', i + 1);
                w.text += s.substr(i + 1, (end == std::string::npos ? s.size() : end) - i - 1);
                i = end == std::string::npos ? s.size() : end + 1;
            } else if (c == '"') {
                for (++i; i < s.size() && s[i] != '"'; ++i) {
                    if (s[i] == '\\' && i + 1 < s.size()) ++i;
                    w.text += s[i];
                }
                ++i;
            } else if (c == '\\' && i + 1 < s.size()) {
                w.text += s[i + 1];
                i += 2;
            } else {
                w.text += c;
                ++i;
            }
        }
        words.push_back(std::move(w));
    }
    return words;
}

std::vector<std::string> exec_form(const std::string& args) {
    std::vector<std::string> out;
    if (args.empty() || args[0] != '[') return out;
    const nlohmann::json array = nlohmann::json::parse(args, nullptr, false);
    if (!array.is_array()) return out;
    for (const nlohmann::json& item : array) {
        if (item.is_string()) out.push_back(item.get<std::string>());
    }
    return out;
}

std::vector<Command> run_commands(const std::string& args) {
    if (const std::vector<std::string> exec = exec_form(args); !exec.empty()) {
        Command command;
        for (const std::string& word : exec)
            command.push_back(Word{word, 0, false});
        return {command};
    }
    std::vector<Command> commands(1);
    for (Word& w : shell_words(args)) {
        if (w.is_operator) {
            if (!commands.back().empty()) commands.emplace_back();
        } else {
            commands.back().push_back(std::move(w));
        }
    }
    if (commands.back().empty()) commands.pop_back();
    return commands;
}

}  // namespace slipway::remote::dockerfile
