// How slipway starts slipway-engine on this computer: its exact command line. Everything that builds an
// engine command goes through engine_arguments(), so moving from one process (`train`) to N local ranks
// (`launch --nproc N -- train`) is the one switch kEngineHasLaunch. Qt-free: the run service uses it.
#pragma once

#include <string>
#include <vector>

#include "contract/status.h"

namespace slipway::app {

// `slipway-engine launch --nproc N -- train ...` runs N local ranks (torchrun-like); false falls back to one
// `train` process (an engine from before launch existed).
inline constexpr bool kEngineHasLaunch = true;

// Arguments after the program: `launch --nproc N -- train --threads T RUN.json OVERRIDES...` once the
// engine has launch, `train --threads T RUN.json OVERRIDES...` before. T = cores / N (at least 1): on
// a small machine ranks that each use every core contend and run slower. `cores` 0: this machine's.
std::vector<std::string> engine_arguments(const std::string& run_json, int nproc,
                                          const std::vector<std::string>& overrides = {}, int cores = 0);

// An engine that can be run: an error naming what is missing otherwise (the one message for the app's Run
// button, `slipway run` and `slipway pipeline run`).
[[nodiscard]] Status check_engine_binary(const std::string& engine);

// The program and its arguments as a shell would show them (for logs and messages, not for running).
std::string command_line(const std::string& program, const std::vector<std::string>& arguments);

}  // namespace slipway::app
