// XDG folders and atomic local writes (see local_files.h).
#include "remote/slurm/local_files.h"

#include <cstdlib>
#include <filesystem>

#include "contract/file_system.h"

namespace slipway::remote {
namespace {

std::string home_dir() {
    const char* home = std::getenv("HOME");
    return home && *home ? home : "/";
}

std::string xdg_dir(const char* variable, const char* fallback_under_home) {
    const char* value = std::getenv(variable);
    std::string base;
    if (value && value[0] == '/') {
        base = value;
    } else {
        base = home_dir() + "/" + fallback_under_home;
    }
    return base + "/slipway";
}

}  // namespace

std::string slipway_config_dir() {
    return xdg_dir("XDG_CONFIG_HOME", ".config");
}
std::string slipway_data_dir() {
    return xdg_dir("XDG_DATA_HOME", ".local/share");
}

Status write_file_atomically(const std::string& path, const std::string& content, unsigned mode) {
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
        std::filesystem::create_directories(parent, ec);
        if (ec) return Status::Error(parent.string() + ": cannot create folder: " + ec.message());
    }
    AtomicWriteOptions options;
    options.mode = mode;
    return slipway::write_file_atomically(path, content, options);
}

Result<std::string> read_local_file(const std::string& path) {
    return slipway::read_file(path);
}

}  // namespace slipway::remote
