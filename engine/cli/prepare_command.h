// `slipway-engine prepare RUN.json`: tokenize the run's data into the token cache that training reads.
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_prepare_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
