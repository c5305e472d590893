// Where this installation's files are (see install_paths.h).
#include "core/install_paths.h"

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

}  // namespace slipway::app
