// The engine's command line (see engine_command.h).
#include "core/engine_command.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
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

Status check_engine_binary(const std::string& engine) {
    if (engine.empty())
        return Status::Error(
            "slipway-engine was not found next to slipway or on PATH; build it (SLIPWAY_BUILD_ENGINE=ON), "
            "set "
            "SLIPWAY_ENGINE or give --engine");
    std::error_code ec;
    if (::access(engine.c_str(), X_OK) != 0 || std::filesystem::is_directory(engine, ec))
        return Status::Error("slipway-engine " + engine + " is not an executable file");
    return Status::Ok();
}

std::string command_line(const std::string& program, const std::vector<std::string>& arguments) {
    std::string out = program;
    for (const std::string& a : arguments)
        out += " " + a;
    return out;
}

}  // namespace slipway::app
