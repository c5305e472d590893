// Tests of Slipway's Dockerfile linter: every rule fails its fixture (tests/data/dockerfile-lint/
// RULE.bad.Dockerfile, whose `# expect: RULE@LINE ...` comment lists exactly the findings) and passes
// RULE.good.Dockerfile with no finding at all; the rendered Dockerfiles of every preset are clean; packages
// typed into the editor are pointed at on their own line; linting stays fast enough for every keystroke.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "contract/run_config.h"
#include "remote/container/dockerfile.h"
#include "remote/container/dockerfile_lint.h"
#include "test_paths.h"

namespace slipway::remote {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(test_paths::source_dir()) / "tests/data/dockerfile-lint";

std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// "rule@line" of every finding, sorted.
std::vector<std::string> found(const std::string& text) {
    std::vector<std::string> out;
    for (const LintFinding& f : lint_dockerfile(text))
        out.push_back(f.rule + "@" + std::to_string(f.line));
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> expected(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind("# expect:", 0) != 0) continue;
        std::istringstream words(line.substr(9));
        std::string word;
        while (words >> word)
            out.push_back(word);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string describe(const std::string& text) {
    std::string out;
    for (const LintFinding& f : lint_dockerfile(text))
        out += "  " + std::to_string(f.line) + " " + f.rule + ": " + f.message + "\n";
    return out;
}

TEST(DockerfileLinter, EveryRuleFailsItsBadFixtureAndPassesItsGoodOne) {
    ASSERT_GE(dockerfile_lint_rules().size(), 15u);
    for (const LintRule& rule : dockerfile_lint_rules()) {
        const fs::path bad = kFixtures / (std::string(rule.id) + ".bad.Dockerfile");
        const fs::path good = kFixtures / (std::string(rule.id) + ".good.Dockerfile");
        ASSERT_TRUE(fs::exists(bad)) << bad;
        ASSERT_TRUE(fs::exists(good)) << good;
        const std::string bad_text = read(bad);
        const std::vector<std::string> want = expected(bad_text);
        ASSERT_FALSE(want.empty()) << bad << " has no `# expect:` line";
        for (const std::string& w : want)
            EXPECT_EQ(w.rfind(std::string(rule.id) + "@", 0), 0u) << bad << " expects another rule: " << w;
        EXPECT_EQ(found(bad_text), want) << bad << "\n" << describe(bad_text);
        const std::string good_text = read(good);
        EXPECT_TRUE(found(good_text).empty()) << good << "\n" << describe(good_text);
    }
}

TEST(DockerfileLinter, EveryFixtureBelongsToARule) {
    std::set<std::string> names;
    for (const LintRule& rule : dockerfile_lint_rules()) {
        names.insert(std::string(rule.id) + ".bad.Dockerfile");
        names.insert(std::string(rule.id) + ".good.Dockerfile");
    }
    for (const auto& entry : fs::directory_iterator(kFixtures))
        EXPECT_EQ(names.count(entry.path().filename().string()), 1u)
            << entry.path() << " is no rule's fixture";
}

TEST(DockerfileLinter, FindingsCarrySeverityAndAMessageNamingTheCulprit) {
    const std::vector<LintFinding> findings =
        lint_dockerfile(read(kFixtures / "pip-replaces-torch.bad.Dockerfile"));
    ASSERT_EQ(findings.size(), 2u);
    EXPECT_EQ(findings[0].line, 6);
    EXPECT_EQ(findings[0].severity, LintSeverity::kError);
    EXPECT_STREQ(lint_severity_name(findings[0].severity), "error");
    EXPECT_NE(findings[0].message.find("torch==2.4.0"), std::string::npos) << findings[0].message;
    EXPECT_NE(findings[1].message.find("torchvision"), std::string::npos) << findings[1].message;
}

RunConfig preset(const fs::path& path) {
    Result<RunConfig> config = load_run_config(path.string());
    EXPECT_TRUE(config.ok()) << config.error();
    return config.ok() ? *config : RunConfig{};
}

TEST(DockerfileLinter, RenderedDockerfilesOfEveryPresetAreClean) {
    std::vector<RunConfig> configs;
    for (const auto& entry :
         fs::directory_iterator(fs::path(test_paths::source_dir()) / "resources/presets")) {
        if (entry.path().extension() == ".json") configs.push_back(preset(entry.path()));  // not <name>.md
    }
    RunConfig full = configs.front();
    full.container.apt_packages = {"git", "nano"};
    full.container.pip_packages = {"transformers==4.37.2", "datasets[audio]==2.18.0"};
    full.container.env = {{"HF_HOME", "/scratch/cache"}, {"TOKENIZERS_PARALLELISM", "false"}};
    configs.push_back(full);
    RunConfig bare = configs.front();
    bare.container.build_engine = false;
    configs.push_back(bare);
    for (const RunConfig& config : configs) {
        Result<std::string> text = render_dockerfile(config);
        ASSERT_TRUE(text.ok()) << config.name << ": " << text.error();
        EXPECT_TRUE(found(*text).empty()) << config.name << "\n" << describe(*text) << *text;
    }
}

// What a user types into the Container page reaches the preview as typed, and the finding names its line.
TEST(DockerfileLinter, TypedPackagesArePointedAtInTheLivePreview) {
    RunConfig config = preset(fs::path(test_paths::source_dir()) / "resources/presets/demo-tiny.json");
    config.container.pip_packages = {"transformers", "torch==2.4.0"};
    EXPECT_FALSE(render_dockerfile(config).ok());  // never built like this
    DockerfileOptions preview;
    preview.require_valid_config = false;
    Result<std::string> text = render_dockerfile(config, preview);
    ASSERT_TRUE(text.ok()) << text.error();
    const std::vector<LintFinding> findings = lint_dockerfile(*text);
    ASSERT_EQ(findings.size(), 2u) << describe(*text);
    std::vector<std::string> lines;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    for (const LintFinding& f : findings) {
        ASSERT_GE(f.line, 1);
        ASSERT_LE(f.line, static_cast<int>(lines.size()));
        EXPECT_NE(lines[static_cast<size_t>(f.line - 1)].find(f.rule == "pip-unpinned" ? "transformers"
                                                                                       : "torch=="),
                  std::string::npos)
            << f.rule << " at line " << f.line << ": " << lines[static_cast<size_t>(f.line - 1)];
    }
    EXPECT_EQ(findings[0].rule, "pip-replaces-torch");  // errors of a line before its warnings
    EXPECT_EQ(findings[1].rule, "pip-unpinned");
}

// The editor lints on every change on the GUI thread: a Dockerfile 20 times the size of ours must take
// well under a frame.
TEST(DockerfileLinter, LintingIsFastEnoughForEveryKeystroke) {
    Result<std::string> one =
        render_dockerfile(preset(fs::path(test_paths::source_dir()) / "resources/presets/demo-tiny.json"));
    ASSERT_TRUE(one.ok());
    std::string big;
    for (int i = 0; i < 20; ++i)
        big += *one;
    const auto start = std::chrono::steady_clock::now();
    constexpr int kRepeats = 20;
    for (int i = 0; i < kRepeats; ++i)
        ASSERT_TRUE(lint_dockerfile(big).empty());
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
        kRepeats;
    std::printf("lint of a %zu-byte Dockerfile: %.3f ms\n", big.size(), ms);
    EXPECT_LT(ms, 16.0);
}

}  // namespace
}  // namespace slipway::remote
