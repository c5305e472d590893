// TempDir: a fresh folder under the system temp dir for one test, removed with everything in it when the
// test ends. Shared by the remote/ unit tests (profiles, sbatch scripts, deploy records).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace slipway::remote::testing_support {

class TempDir {
public:
    explicit TempDir(const std::string& prefix = "slipway-test") {
        std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
        path_ = ::mkdtemp(pattern.data());
    }
    ~TempDir() { std::filesystem::remove_all(path_); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace slipway::remote::testing_support
