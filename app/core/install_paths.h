// Where this installation's own files are: resources/ (the source tree when run from build/bin,
// <prefix>/share/slipway when installed) and slipway-engine next to the running binary. The CLI, the app's
// pages and the cluster doctor find them the same way.
#pragma once

#include <string>

namespace slipway::app {

// The folder holding resources/; empty when none is found.
std::string resource_root();
// slipway-engine next to this executable, or empty.
std::string engine_next_to_slipway();
// The engine bundle (engine/bundle/) of this version: $SLIPWAY_ENGINE_BUNDLE when set, else the build tree's
// (build/slipway-engine-src.tar.gz beside build/bin), else the installed one (<prefix>/share/slipway); or "".
std::string find_engine_bundle();
// What to say when find_engine_bundle() finds none.
const char* no_engine_bundle_text();
// Where runs on This computer get their folders: $XDG_DATA_HOME/slipway/local-runs (~/.local/share/...).
// Not slipway/runs: that folder holds the cluster run records (remote/deploy/run_record.h).
std::string default_local_runs_dir();
// The engine the app runs: $SLIPWAY_ENGINE when set (tests, an engine built elsewhere), else the one next to
// this executable (build/bin, /usr/bin), else the one on PATH, else "".
std::string find_engine_binary();

}  // namespace slipway::app
