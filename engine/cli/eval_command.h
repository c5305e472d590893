// `slipway-engine eval`: runs the tasks of a task file (engine/eval/README.md) on a model folder with an
// optional LoRA adapter and prints the metrics as JSON.
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_eval_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
