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

}  // namespace slipway::app
