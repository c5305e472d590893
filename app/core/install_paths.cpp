// Where this installation's files are (see install_paths.h).
#include "core/install_paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace slipway::app {

namespace fs = std::filesystem;

std::string resource_root() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    std::vector<fs::path> candidates;
    if (!ec) {
        candidates.push_back(exe.parent_path() / ".." / "..");                 // <source>/build/bin
        candidates.push_back(exe.parent_path() / ".." / "share" / "slipway");  // <prefix>/bin
    }
    candidates.emplace_back(SLIPWAY_SOURCE_DIR);
    candidates.push_back(fs::current_path(ec));
    for (const fs::path& dir : candidates) {
        if (fs::exists(dir / "resources" / "presets" / "demo-tiny.json", ec))
            return fs::canonical(dir, ec).string();
    }
    return "";
}

std::string engine_next_to_slipway() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return "";
    const fs::path engine = exe.parent_path() / "slipway-engine";
    return fs::is_regular_file(engine, ec) ? engine.string() : "";
}

std::string find_engine_bundle() {
    if (const char* chosen = std::getenv("SLIPWAY_ENGINE_BUNDLE"); chosen != nullptr && *chosen != '\0')
        return chosen;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return "";
    for (const fs::path& candidate :
         {exe.parent_path().parent_path() / "slipway-engine-src.tar.gz",
          exe.parent_path().parent_path() / "share/slipway/slipway-engine-src.tar.gz"}) {
        if (fs::is_regular_file(candidate, ec)) return candidate.string();
    }
    return "";
}

const char* no_engine_bundle_text() {
    return "this slipway carries no engine bundle (a build made without network at its first configure has "
           "none: reconfigure with the Debian mirror reachable); $SLIPWAY_ENGINE_BUNDLE names one";
}

std::string default_local_runs_dir() {
    const char* data = std::getenv("XDG_DATA_HOME");
    const char* home = std::getenv("HOME");
    const std::string base =
        data != nullptr && *data == '/' ? data : std::string(home != nullptr ? home : "") + "/.local/share";
    return base + "/slipway/local-runs";
}

std::string find_engine_binary() {
    if (const char* chosen = std::getenv("SLIPWAY_ENGINE"); chosen != nullptr && *chosen != '\0')
        return chosen;
    if (std::string beside = engine_next_to_slipway(); !beside.empty()) return beside;
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "";
    size_t start = 0;
    while (start <= dirs.size()) {
        const size_t colon = std::min(dirs.find(':', start), dirs.size());
        const std::string dir = dirs.substr(start, colon - start);
        start = colon + 1;
        if (dir.empty()) continue;
        const std::string candidate = dir + "/slipway-engine";
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return "";
}

}  // namespace slipway::app
