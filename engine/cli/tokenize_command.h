// `slipway-engine tokenize`: JSONL on stdin -> {"ids": [...]} per line (or --decode: ids -> text).
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_tokenize_command(CLI::App& app, int* exit_code, std::istream& in, std::ostream& out,
                          std::ostream& err);

}  // namespace slipway::engine
