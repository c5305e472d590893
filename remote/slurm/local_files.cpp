// XDG folders and atomic local writes (see local_files.h).
#include "remote/slurm/local_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

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
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) {
        fs::create_directories(parent, ec);
        if (ec) return Status::Error(parent.string() + ": cannot create folder: " + ec.message());
    }
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return Status::Error(tmp + ": cannot write: " + std::strerror(errno));
        out << content;
        out.flush();
        if (!out) {
            fs::remove(tmp, ec);
            return Status::Error(tmp + ": write failed: " + std::strerror(errno));
        }
    }
    if (::chmod(tmp.c_str(), static_cast<mode_t>(mode)) != 0) {
        const std::string why = std::strerror(errno);
        fs::remove(tmp, ec);
        return Status::Error(tmp + ": chmod: " + why);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        fs::remove(tmp, ec);
        return Status::Error(path + ": cannot rename the new file into place: " + why);
    }
    return Status::Ok();
}

Result<std::string> read_local_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::Error(path + ": cannot read: " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace slipway::remote
