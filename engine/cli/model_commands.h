// `slipway-engine init-model` (random HF model from a config.json) and `score` (per-line loss and
// accuracy of token ids under a model): the engine's hooks for checking models against references.
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_model_commands(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
