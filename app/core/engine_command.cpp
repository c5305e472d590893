// The engine's command line (see engine_command.h).
#include "core/engine_command.h"

#include <algorithm>
#include <thread>

namespace slipway::app {

std::vector<std::string> engine_arguments(const std::string& run_json, int nproc,
                                          const std::vector<std::string>& overrides, int cores) {
    if (cores <= 0) cores = std::max(1u, std::thread::hardware_concurrency());
    const int ranks = kEngineHasLaunch ? std::max(1, nproc) : 1;
    const int threads = std::max(1, cores / ranks);
    std::vector<std::string> out;
    if (kEngineHasLaunch) out = {"launch", "--nproc", std::to_string(ranks), "--"};
    out.insert(out.end(), {"train", "--threads", std::to_string(threads), run_json});
    out.insert(out.end(), overrides.begin(), overrides.end());
    return out;
}

std::string command_line(const std::string& program, const std::vector<std::string>& arguments) {
    std::string out = program;
    for (const std::string& a : arguments)
        out += " " + a;
    return out;
}

}  // namespace slipway::app
