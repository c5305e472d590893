// StopSignals (stop_signals.h).
#include "cli/stop_signals.h"

#include <atomic>

#include "service/local_executor.h"

namespace slipway::app {
namespace {

std::atomic<bool> g_stop_asked{false};

static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

void ask_stop(int) {
    g_stop_asked = true;
}

}  // namespace

StopSignals::StopSignals() {
    g_stop_asked = false;
    struct sigaction action = {};
    action.sa_handler = ask_stop;
    action.sa_flags = SA_RESTART;  // a write to stdout is not cut short
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) {
        sigaction(kSignals[i], nullptr, &old_[i]);
        if (old_[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &action, nullptr);
    }
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old_pipe_);
}

StopSignals::~StopSignals() {
    for (size_t i = 0; i < kSignals.size(); ++i)
        sigaction(kSignals[i], &old_[i], nullptr);
    sigaction(SIGPIPE, &old_pipe_, nullptr);
}

bool StopSignals::asked() const {
    return g_stop_asked;
}

std::string stop_grace_text() {
    return "(it saves a checkpoint; killed in " + std::to_string(kStopGrace.count() / 1000) + " s otherwise)";
}

}  // namespace slipway::app
