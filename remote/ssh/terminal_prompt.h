// How a terminal front end (the slipway CLI) asks a person for an SSH answer or secret: one line from the
// controlling terminal, echo off for secrets, and the terminal restored however the prompt ends, ^C
// included. Show server-sent text only through printable_prompt_text() (prompt_text.h).
#pragma once

#include <optional>
#include <string>

namespace slipway::remote {

// Prints `prompt` on /dev/tty (not stdout/stdin, which may be pipes) and reads one line from it, without
// echo when `secret`. nullopt when there is no terminal, it reached end of input, or a read failed (a
// partial line is never returned then). While echo is off, SIGINT, SIGTERM, SIGHUP and SIGQUIT restore the
// terminal's settings first and then take their previous action (by default: end the process), so ^C
// never leaves the shell without echo; ^Z (SIGTSTP) restores them while stopped and turns echo off again
// when continued. Signals already ignored (SIG_IGN) are left ignored.
std::optional<std::string> ask_terminal(const std::string& prompt, bool secret);

}  // namespace slipway::remote
