// A shell command's exit code and its stdout+stderr, for tests that check rendered scripts with bash and
// shellcheck.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace slipway::remote::testing_support {

struct CommandResult {
    int exit_code = -1;
    std::string output;
};

inline CommandResult run_command(const std::string& command) {
    CommandResult r;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return r;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
        r.output.append(buffer, n);
    const int status = ::pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

}  // namespace slipway::remote::testing_support
