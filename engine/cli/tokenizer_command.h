// `slipway-engine tokenizer train`: learn a byte-level BPE tokenizer.json from a JSONL corpus.
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_tokenizer_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
