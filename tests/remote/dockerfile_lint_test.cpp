// Lints the Dockerfile of every preset (and one with apt, pip and env) with dockerfile-utils from npm,
// installed by the dockerfile_lint CTest fixture; SLIPWAY_DOCKERFILE_LINT names its binary. Also checks
// that what Slipway's own linter calls clean (the rules' good fixtures) is clean for dockerfile-utils too.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "contract/run_config.h"
#include "remote/container/dockerfile.h"
#include "remote/container/dockerfile_lint.h"

namespace slipway::remote {
namespace {

namespace fs = std::filesystem;

std::pair<int, std::string> lint(const std::string& linter, const std::string& text) {
    const std::string path =
        (fs::temp_directory_path() / ("slipway-lint-" + std::to_string(::getpid()) + ".Dockerfile")).string();
    std::ofstream(path) << text;
    std::string output;
    FILE* pipe = ::popen(("'" + linter + "' lint '" + path + "' 2>&1").c_str(), "r");
    if (!pipe) return {-1, "popen failed"};
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
        output.append(buffer, n);
    const int status = ::pclose(pipe);
    fs::remove(path);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(DockerfileLint, RenderedDockerfilesPassDockerfileUtils) {
    const char* linter = std::getenv("SLIPWAY_DOCKERFILE_LINT");
    ASSERT_NE(linter, nullptr) << "run through ctest: the dockerfile_lint fixture installs the linter";
    std::vector<RunConfig> configs;
    for (const auto& entry : fs::directory_iterator(std::string(SLIPWAY_SOURCE_DIR) + "/resources/presets")) {
        if (entry.path().extension() != ".json") continue;  // <name>.md: the preset's description
        Result<RunConfig> config = load_run_config(entry.path().string());
        ASSERT_TRUE(config.ok()) << config.error();
        configs.push_back(*config);
    }
    RunConfig full = configs.front();
    full.container.apt_packages = {"git", "nano"};
    full.container.pip_packages = {"transformers==4.37.2", "datasets==2.18.0"};
    full.container.env = {{"HF_HOME", "/scratch/cache"}, {"NCCL_DEBUG", "WARN"}};
    configs.push_back(full);
    // A Dockerfile with a real mistake must fail, or this test proves nothing.
    const auto broken =
        lint(linter, "FROM nvcr.io/nvidia/pytorch:24.04-py3\nEXPOSE port\nWORKDIR relative\n");
    EXPECT_NE(broken.first, 0) << broken.second;
    EXPECT_NE(broken.second.find("WORKDIR"), std::string::npos) << broken.second;
    for (const RunConfig& config : configs) {
        Result<std::string> text = render_dockerfile(config);
        ASSERT_TRUE(text.ok()) << config.name << ": " << text.error();
        const auto [code, output] = lint(linter, *text);
        EXPECT_EQ(code, 0) << config.name << "\n" << output << "\n" << *text;
        EXPECT_EQ(output, "") << config.name << "\n" << *text;  // no warnings either
    }
}

TEST(DockerfileLint, CleanForSlipwayMeansCleanForDockerfileUtils) {
    const char* linter = std::getenv("SLIPWAY_DOCKERFILE_LINT");
    ASSERT_NE(linter, nullptr) << "run through ctest: the dockerfile_lint fixture installs the linter";
    int checked = 0;
    for (const auto& entry :
         fs::directory_iterator(std::string(SLIPWAY_SOURCE_DIR) + "/tests/data/dockerfile-lint")) {
        std::ifstream in(entry.path());
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!lint_dockerfile(text).empty()) continue;
        const auto [code, output] = lint(linter, text);
        EXPECT_EQ(code, 0) << entry.path() << "\n" << output;
        EXPECT_EQ(output, "") << entry.path();
        ++checked;
    }
    EXPECT_GE(checked, static_cast<int>(dockerfile_lint_rules().size()));  // at least every good fixture
}

}  // namespace
}  // namespace slipway::remote
