// StopSignals: how a CLI command that runs a process on This computer (`slipway run`, `slipway pipeline
// run`) hears Ctrl-C. The process runs in a process group of its own (service/child_process.h), so the
// terminal's SIGINT never reaches it: while a StopSignals lives, SIGINT, SIGTERM and a closed terminal
// (SIGHUP) only set a flag, and the command stops the process itself (SIGTERM, a grace to save, then
// SIGKILL) and stores how the run ended. A signal ignored when slipway started (nohup) stays ignored. A
// reader that went away (`| head`) must not kill slipway before it has stopped the process and stored the
// end: SIGPIPE is ignored meanwhile. The old handlers come back when it goes.
#pragma once

#include <signal.h>

#include <array>
#include <string>

namespace slipway::app {

class StopSignals {
public:
    StopSignals();
    ~StopSignals();
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

    // A stop signal came since this was made.
    bool asked() const;

private:
    static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
    std::array<struct sigaction, 3> old_ = {};
    struct sigaction old_pipe_ = {};
};

// What a stop does, for the line the command prints when it begins one: "(it saves a checkpoint; killed in
// 10 s otherwise)".
std::string stop_grace_text();

}  // namespace slipway::app
