// Where Slipway keeps its own files on this computer (the XDG base directories) and how it writes them
// (atomically and durably, so a crash never leaves half a file).
#pragma once

#include <string>

#include "contract/status.h"

namespace slipway::remote {

// $XDG_CONFIG_HOME/slipway, or ~/.config/slipway when the variable is unset, empty or relative (the XDG
// spec says to ignore relative values).
std::string slipway_config_dir();
// $XDG_DATA_HOME/slipway, or ~/.local/share/slipway.
std::string slipway_data_dir();

// Creates the parent folders, then slipway::write_file_atomically (contract/file_system.h) with exact
// permission bits `mode` (0600 for files only the user should read).
Status write_file_atomically(const std::string& path, const std::string& content, unsigned mode = 0644);
Result<std::string> read_local_file(const std::string& path);

}  // namespace slipway::remote
