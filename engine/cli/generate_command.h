// `slipway-engine generate`: text from a model folder (with an optional PEFT adapter) for one prompt or a
// JSONL file of them (stdin with -), greedy or sampled, optionally through the model's chat template, with
// the text streamed as it is generated. One JSON line out per prompt (generate_command.cpp has the format).
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_generate_command(CLI::App& app, int* exit_code, std::istream& in, std::ostream& out,
                          std::ostream& err);

}  // namespace slipway::engine
