// `slipway-engine train RUN.json [--flag value ...]`: one-process training; seed-style flags override
// the config (e.g. --learning_rate 1e-4 --max_steps 100).
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_train_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
