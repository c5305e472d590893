// A Dockerfile linter for Slipway's training images: the mistakes that cost a build or a broken image on an
// NGC PyTorch base (pip replacing the image's torch, seed 000's rule), and the usual apt, pip and base-tag
// slips in packages a user types into the Container page. No widgets: the Container page shows the
// findings next to its live preview; tests check each rule on fixture Dockerfiles (tests/data/
// dockerfile-lint). It reads Dockerfiles the way docker does (comments, `\` continuations, shell and exec
// form, stages named with AS) but does not run a shell: heredocs and variables are not expanded.
#pragma once

#include <string>
#include <vector>

namespace slipway::remote {

enum class LintSeverity {
    kError,    // the build fails or the image is broken
    kWarning,  // works today, breaks or drifts later
    kInfo,     // a bigger or slower image than needed
};

const char* lint_severity_name(LintSeverity severity);  // "error" | "warning" | "info"

struct LintRule {
    const char* id;  // "pip-replaces-torch"
    LintSeverity severity;
    const char* summary;  // one line: what it catches and why it matters
};

// Every rule, in the order findings of one line are reported.
const std::vector<LintRule>& dockerfile_lint_rules();

struct LintFinding {
    int line = 0;  // 1-based line of the Dockerfile where the problem is
    LintSeverity severity = LintSeverity::kWarning;
    std::string rule;
    std::string message;  // names the package, tag or path
};

// Findings in line order. An empty result means clean.
std::vector<LintFinding> lint_dockerfile(const std::string& text);

}  // namespace slipway::remote
