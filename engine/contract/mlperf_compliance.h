// Our own implementation of the MLPerf Training log compliance rules (mlcommons/logging, training
// ruleset 4.0.0: common, closed_common and closed_llama2_70b_lora), so a Slipway log can be checked
// without Python or the network: which keys must occur once or at least once, their values and metadata,
// and the order of init, run, block and eval lines. Written from the rules, not from the checker's code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace slipway {

// One rule of the rules files and what broke it in a log.
struct MlperfRuleOutcome {
    std::string id;                     // "common: init_stop occurs exactly once", stable for tests
    std::vector<std::string> failures;  // empty: the rule passed; else one line per offending log line

    bool passed() const { return failures.empty(); }
};

struct MlperfComplianceReport {
    std::vector<MlperfRuleOutcome> rules;  // in the order of the rules files

    // Every rule passed except those whose id is in `excepted`.
    bool passed_except(const std::vector<std::string>& excepted = {}) const;
    // "FAIL <id>: <failure>" lines of every failed rule not in `excepted`.
    std::string failures_text(const std::vector<std::string>& excepted = {}) const;
};

// The convergence rule: at least one eval_accuracy reaches the llama2_70b_lora target (<= 0.925, > 0).
// A short test run cannot reach it; everything else must pass.
inline constexpr std::string_view kMlperfConvergenceRule =
    "closed_llama2_70b_lora: at least one eval_accuracy in (0, 0.925]";

// Checks a whole log (text with ":::MLLOG " lines among anything else; srun's "0: " prefixes allowed)
// against the training 4.0.0 rules of the benchmark and division the log names. Benchmarks other than
// llama2_70b_lora in the closed division get the common rules and a failure saying they are not covered.
MlperfComplianceReport check_mlperf_compliance(std::string_view log_text);

}  // namespace slipway
