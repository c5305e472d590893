// POSIX single-quote quoting for remote commands (see shell_quote.h).
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

bool is_plain_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '/' || c == ',' || c == ':' || c == '@' || c == '%' || c == '+' || c == '-';
}

}  // namespace

Result<std::string> shell_quote(std::string_view value, std::string_view what) {
    const auto nul = value.find('\0');
    if (nul != std::string_view::npos) {
        return Result<std::string>::Error(std::string(what) + " contains a NUL byte at position " +
                                          std::to_string(nul) + "; a shell command cannot carry it");
    }
    bool plain = !value.empty();
    for (char c : value)
        plain = plain && is_plain_word_char(c);
    if (plain) return std::string(value);

    std::string quoted;
    quoted.reserve(value.size() + 2);
    quoted += '\'';
    for (char c : value) {
        if (c == '\'') {
            quoted += "'\\''";  // close the quote, an escaped quote, reopen
        } else {
            quoted += c;
        }
    }
    quoted += '\'';
    return quoted;
}

Result<std::string> shell_command(const std::vector<std::string>& argv) {
    std::string command;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        auto word = shell_quote(argv[i], "argument " + std::to_string(i));
        if (!word) return word.status();
        if (i > 0) command += ' ';
        command += *word;
    }
    return command;
}

}  // namespace slipway::remote
