// `slipway-engine plan RUN.json [--model-config config.json] [--json]`: will the run fit, and how long.
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

// Adds the `plan` subcommand to `app`; its exit code goes to `*exit_code` (0 with a plan, fitting or not).
void add_plan_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
