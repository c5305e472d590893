// The one way a value reaches a remote shell: every remote command Slipway runs is built here, so a job
// name or a path with quotes, $(), backticks or newlines arrives as data and never executes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "contract/status.h"

namespace slipway::remote {

// `value` as one POSIX shell word. Words made only of [A-Za-z0-9_./,:@%+-] stay as they are; anything
// else is wrapped in single quotes with each ' written as '\'' (inside single quotes a POSIX shell
// expands nothing). NUL cannot be passed through a shell command line, so it is rejected, naming `what`
// (e.g. "job name") and the byte position. The remote login shell must be POSIX (sh, bash, zsh, dash).
Result<std::string> shell_quote(std::string_view value, std::string_view what = "value");

// argv quoted word by word and joined by spaces: shell_command({"mkdir", "-p", dir}).
Result<std::string> shell_command(const std::vector<std::string>& argv);

}  // namespace slipway::remote
