// `slipway-engine config ...`: validate, print, from-args and schema, wired onto a CLI11 app.
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

// Adds the `config` subcommand tree to `app`. Each command stores its exit code in `*exit_code`;
// output goes to `out`, diagnostics to `err`.
void add_config_commands(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
