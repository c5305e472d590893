// `slipway-engine launch --nproc N [--threads-per-rank T] -- train RUN.json ...`: N local ranks of an
// engine subcommand (or of a program given by path), like torchrun. The "This computer" profile uses it.
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_launch_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
