// check_mlperf_compliance(): the submitters' real llama2_70b_lora logs pass every rule; a minimal
// compliant log passes all but the convergence target; each broken rule is reported under its own id.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "contract/mllog.h"
#include "contract/mlperf_compliance.h"
#include "test_paths.h"

namespace slipway {
namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

const MlperfRuleOutcome* find_rule(const MlperfComplianceReport& report, const std::string& id) {
    for (const MlperfRuleOutcome& r : report.rules) {
        if (r.id == id) return &r;
    }
    return nullptr;
}

TEST(MlperfCompliance, RealSubmissionLogsPassEveryRule) {
    for (const char* name :
         {"dell-xe9680-result_0.txt", "fujitsu-gx2560m7-result_0.txt", "juniper-h100n1-result_0.txt"}) {
        const MlperfComplianceReport report = check_mlperf_compliance(
            read_text(std::string(test_paths::test_data_dir("/mlperf-logs/")) + name));
        EXPECT_GT(report.rules.size(), 50u) << name;
        EXPECT_TRUE(report.passed_except()) << name << "\n" << report.failures_text();
    }
}

// A log in the order Slipway writes it; `edit` may change the events before they are written.
std::string minimal_log(const std::function<void(std::vector<MllogEvent>&)>& edit = nullptr) {
    using J = MllogJson;
    std::vector<MllogEvent> events;
    int64_t t = 1000;
    auto add = [&](std::string_view type, const char* key, J value = nullptr, J metadata = J::object()) {
        events.push_back({"", t += 10, std::string(type), key, std::move(value), std::move(metadata)});
    };
    add(kIntervalStart, "init_start");
    add(kPointInTime, "cache_clear", true);
    add(kPointInTime, "submission_benchmark", "llama2_70b_lora");
    add(kPointInTime, "submission_org", "Slipway");
    add(kPointInTime, "submission_division", "closed");
    add(kPointInTime, "submission_status", "onprem");
    add(kPointInTime, "submission_platform", "1xDGX-H100");
    add(kPointInTime, "global_batch_size", 8);
    add(kPointInTime, "opt_base_learning_rate", 4e-4);
    add(kPointInTime, "lora_rank", 16);
    add(kPointInTime, "lora_alpha", 32.0);
    add(kPointInTime, "gradient_accumulation_steps", 1);
    add(kPointInTime, "opt_gradient_clip_norm", 0.3);
    add(kPointInTime, "opt_adamw_weight_decay", 1e-4);
    add(kPointInTime, "opt_learning_rate_training_steps", 1024);
    add(kPointInTime, "train_samples", 3901);
    add(kPointInTime, "eval_samples", 173);
    add(kIntervalEnd, "init_stop");
    add(kIntervalStart, "run_start");
    add(kIntervalStart, "block_start", nullptr, {{"samples_count", 0}});
    add(kIntervalEnd, "block_stop", nullptr, {{"samples_count", 384}});
    add(kIntervalStart, "eval_start", nullptr, {{"samples_count", 384}});
    add(kIntervalEnd, "eval_stop", nullptr, {{"samples_count", 384}});
    add(kPointInTime, "eval_accuracy", 2.5, {{"samples_count", 384}});
    add(kIntervalEnd, "run_stop", nullptr, {{"status", "aborted"}});
    if (edit) edit(events);
    std::string text = "some job output\n";
    for (const MllogEvent& e : events)
        text += "0: " + format_mllog_line(e) + "\n";
    return text;
}

TEST(MlperfCompliance, MinimalLogFailsOnlyTheConvergenceTarget) {
    const MlperfComplianceReport report = check_mlperf_compliance(minimal_log());
    EXPECT_TRUE(report.passed_except({std::string(kMlperfConvergenceRule)})) << report.failures_text();
    const MlperfRuleOutcome* target = find_rule(report, std::string(kMlperfConvergenceRule));
    ASSERT_NE(target, nullptr);
    EXPECT_FALSE(target->passed());
}

void remove_key(std::vector<MllogEvent>& events, const std::string& key) {
    events.erase(
        std::remove_if(events.begin(), events.end(), [&](const MllogEvent& e) { return e.key == key; }),
        events.end());
}

struct BrokenCase {
    std::string label;
    std::function<void(std::vector<MllogEvent>&)> edit;
    std::string rule;  // the id that must fail (others may fail too)
};

class MlperfBrokenLog : public testing::TestWithParam<BrokenCase> {};

TEST_P(MlperfBrokenLog, FailsTheNamedRule) {
    const MlperfComplianceReport report = check_mlperf_compliance(minimal_log(GetParam().edit));
    const MlperfRuleOutcome* rule = find_rule(report, GetParam().rule);
    ASSERT_NE(rule, nullptr) << GetParam().rule;
    EXPECT_FALSE(rule->passed()) << report.failures_text();
}

MllogEvent& event_of(std::vector<MllogEvent>& events, const std::string& key) {
    for (MllogEvent& e : events) {
        if (e.key == key) return e;
    }
    throw std::runtime_error("no " + key);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, MlperfBrokenLog,
    testing::Values(
        BrokenCase{"no_cache_clear", [](auto& e) { remove_key(e, "cache_clear"); },
                   "common: cache_clear occurs at least once"},
        BrokenCase{"empty_org", [](auto& e) { event_of(e, "submission_org").value = ""; },
                   "common: submission_org: value is not \"\""},
        BrokenCase{"unknown_status", [](auto& e) { event_of(e, "submission_status").value = "available"; },
                   "common: submission_status: value in {cloud, onprem, preview, research}"},
        BrokenCase{"rank_8", [](auto& e) { event_of(e, "lora_rank").value = 8; },
                   "closed_llama2_70b_lora: lora_rank: value == 16"},
        BrokenCase{"two_batch_sizes",
                   [](auto& e) { e.insert(e.begin() + 8, event_of(e, "global_batch_size")); },
                   "closed_llama2_70b_lora: global_batch_size occurs exactly once"},
        BrokenCase{"no_eval_samples", [](auto& e) { remove_key(e, "eval_samples"); },
                   "common: eval_samples occurs exactly once"},
        BrokenCase{"division_after_init_stop",
                   [](auto& e) {
                       MllogEvent division = event_of(e, "submission_division");
                       remove_key(e, "submission_division");
                       e.push_back(division);
                   },
                   "common: init_stop: within the division's init time (30 min closed, 240 open; "
                   "submission_division first)"},
        BrokenCase{"init_too_long", [](auto& e) { event_of(e, "init_stop").time_ms += 31 * 60 * 1000; },
                   "common: init_stop: within the division's init time (30 min closed, 240 open; "
                   "submission_division first)"},
        BrokenCase{"run_stop_without_status",
                   [](auto& e) { event_of(e, "run_stop").metadata = MllogJson::object(); },
                   "common: run_stop: metadata has status"},
        BrokenCase{"block_before_run_start",
                   [](auto& e) {
                       MllogEvent block = event_of(e, "block_start");
                       e.insert(e.begin() + 1, block);
                   },
                   "common: block_start: after run_start"},
        BrokenCase{"no_blocks",
                   [](auto& e) {
                       remove_key(e, "block_start");
                       remove_key(e, "block_stop");
                   },
                   "common: block_start or epoch_start occurs at least once"},
        BrokenCase{"block_stop_without_count",
                   [](auto& e) { event_of(e, "block_stop").metadata = MllogJson::object(); },
                   "common: block_stop: metadata has first_epoch_num or samples_count"},
        BrokenCase{"eval_without_samples",
                   [](auto& e) {
                       event_of(e, "eval_accuracy").metadata = {{"epoch_num", 1}};
                   },
                   "closed_llama2_70b_lora: eval_accuracy: metadata has samples_count"},
        BrokenCase{"accumulation_zero", [](auto& e) { event_of(e, "gradient_accumulation_steps").value = 0; },
                   "closed_common: gradient_accumulation_steps: value > 0"},
        BrokenCase{"open_division", [](auto& e) { event_of(e, "submission_division").value = "open"; },
                   "coverage: closed llama2_70b_lora"}),
    [](const testing::TestParamInfo<BrokenCase>& info) { return info.param.label; });

TEST(MlperfCompliance, BadMllogLinesAreReported) {
    const MlperfComplianceReport report =
        check_mlperf_compliance(minimal_log() + ":::MLLOG {\"key\": \"x\"\n");
    const MlperfRuleOutcome* parser =
        find_rule(report, "parser: every MLLOG line is JSON with time_ms, key, value and metadata");
    ASSERT_NE(parser, nullptr);
    EXPECT_EQ(parser->failures.size(), 1u);
}

}  // namespace
}  // namespace slipway
