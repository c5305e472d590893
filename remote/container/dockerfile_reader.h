// Reading a Dockerfile as docker reads it, for the linter: instructions (comment and blank lines skipped,
// `\` continuations joined, the physical line of every offset kept), the shell words of a RUN line with
// quotes honoured and control operators apart, and RUN's commands (shell or exec form). No shell runs:
// variables, heredocs and command substitutions stay as written.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace slipway::remote::dockerfile {

// One instruction, its continuation lines joined with spaces.
struct Instruction {
    int line = 0;               // where it starts (1-based)
    std::string keyword;        // upper case: "RUN"
    bool written_upper = true;  // false for `run ...`
    std::string args;
    std::vector<std::pair<size_t, int>> starts;  // (offset in args, line) where each physical line begins

    int line_of(size_t offset) const;  // the physical line of args[offset]
};

std::vector<Instruction> read_instructions(const std::string& text);

struct Word {
    std::string text;  // quotes and escapes removed
    size_t offset = 0;
    bool is_operator = false;  // && || ; | & ( )
};

std::vector<Word> shell_words(const std::string& line);

using Command = std::vector<Word>;

// The exec form (a JSON array) is one command; the shell form splits at control operators.
std::vector<Command> run_commands(const std::string& args);

// The strings of an exec-form JSON array; empty when `args` is not one.
std::vector<std::string> exec_form(const std::string& args);

std::string trim(const std::string& s);

}  // namespace slipway::remote::dockerfile
