// The training 4.0.0 compliance rules of mlperf_compliance.h as a table: per key, how often it must occur
// and what each of its lines must satisfy, given what the log said before it (a small state). The rules
// files are layered (common, then closed_common, then closed_<benchmark>), each walking the log with its
// own state. Where a later file names a key again, both files' rules apply here (the official checker
// keeps only the later one's messages): stricter, never looser.
#include "contract/mlperf_compliance.h"
#include "contract/mllog_keys.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "contract/mllog.h"

namespace slipway {
namespace {

// One parsed MLLOG line and its place among the MLLOG lines (0-based, as the rules' messages count).
struct LogLine {
    size_t index = 0;
    double time_ms = 0;
    MllogEvent event;
};

// What a rules file remembers while it walks the log.
struct RuleState {
    bool init_started = false;
    bool init_stopped = false;
    bool run_started = false;
    double first_init_start_ms = std::numeric_limits<double>::infinity();
    double init_limit_minutes = 0;  // set by submission_division: 30 closed, 240 open
};

enum class Occurrence { kAny, kExactlyOne, kAtLeastOne, kAtLeastOneOf };

// A condition on one line of a key; `what` names it in the rule id.
struct LineCheck {
    std::string what;
    std::function<bool(const LogLine&, const RuleState&)> holds;
};

struct KeyRule {
    std::string key;
    Occurrence occurrence = Occurrence::kAny;
    std::vector<std::string> alternatives;  // kAtLeastOneOf: any of key and these keys
    std::vector<LineCheck> checks;
    std::function<void(const LogLine&, RuleState&)> after;  // state updates once the line is checked
};

struct RulesFile {
    std::string name;  // "common", "closed_common", "closed_llama2_70b_lora"
    std::vector<KeyRule> keys;
};

const nlohmann::ordered_json* metadata_field(const LogLine& line, const char* name) {
    const MllogJson& m = line.event.metadata;
    if (!m.is_object()) return nullptr;
    auto it = m.find(name);
    return it == m.end() ? nullptr : &*it;
}
bool has_metadata(const LogLine& line, const char* name) {
    return metadata_field(line, name) != nullptr;
}
// A metadata number compared with `bound`; absent counts as satisfied (the rules check only what is there).
bool metadata_at_least(const LogLine& line, const char* name, double bound, bool strictly) {
    const nlohmann::ordered_json* v = metadata_field(line, name);
    if (v == nullptr) return true;
    if (!v->is_number()) return false;
    return strictly ? v->get<double>() > bound : v->get<double>() >= bound;
}
bool value_not_empty_string(const LogLine& line) {
    return !(line.event.value.is_string() && line.event.value.get<std::string>().empty());
}
LineCheck value_in(std::vector<std::string> allowed) {
    std::string what = "value in {";
    for (size_t i = 0; i < allowed.size(); ++i)
        what += (i ? ", " : "") + allowed[i];
    what += "}";
    return {what, [allowed](const LogLine& l, const RuleState&) {
                const MllogJson& v = l.event.value;
                return v.is_string() &&
                       std::find(allowed.begin(), allowed.end(), v.get<std::string>()) != allowed.end();
            }};
}
const LineCheck kNotEmpty{"value is not \"\"",
                          [](const LogLine& l, const RuleState&) { return value_not_empty_string(l); }};
LineCheck metadata_has_either(const char* a, const char* b) {
    return {std::string("metadata has ") + a + " or " + b,
            [a, b](const LogLine& l, const RuleState&) { return has_metadata(l, a) || has_metadata(l, b); }};
}

RulesFile common_rules() {
    RulesFile f{"common", {}};
    auto add = [&f](KeyRule rule) { f.keys.push_back(std::move(rule)); };
    add({"submission_org", Occurrence::kExactlyOne, {}, {kNotEmpty}, nullptr});
    add({"submission_platform", Occurrence::kExactlyOne, {}, {kNotEmpty}, nullptr});
    add({"submission_division",
         Occurrence::kExactlyOne,
         {},
         {value_in({"closed", "open"})},
         [](const LogLine& l, RuleState& s) { s.init_limit_minutes = l.event.value == "open" ? 240 : 30; }});
    add({"submission_status",
         Occurrence::kExactlyOne,
         {},
         {value_in({"cloud", "onprem", "preview", "research"})},
         nullptr});
    add({"cache_clear", Occurrence::kAtLeastOne, {}, {}, nullptr});
    add({"init_start",
         Occurrence::kAtLeastOne,
         {},
         {{"not after init_stop", [](const LogLine&, const RuleState& s) { return !s.init_stopped; }},
          {"not after run_start", [](const LogLine&, const RuleState& s) { return !s.run_started; }}},
         [](const LogLine& l, RuleState& s) {
             s.init_started = true;
             s.first_init_start_ms = std::min(s.first_init_start_ms, l.time_ms);
         }});
    add({"init_stop",
         Occurrence::kExactlyOne,
         {},
         {{"after init_start", [](const LogLine&, const RuleState& s) { return s.init_started; }},
          {"not after run_start", [](const LogLine&, const RuleState& s) { return !s.run_started; }},
          {"within the division's init time (30 min closed, 240 open; submission_division first)",
           [](const LogLine& l, const RuleState& s) {
               return l.time_ms - s.first_init_start_ms < s.init_limit_minutes * 60 * 1e3;
           }}},
         [](const LogLine&, RuleState& s) { s.init_stopped = true; }});
    add({"run_start",
         Occurrence::kExactlyOne,
         {},
         {{"after init_stop", [](const LogLine&, const RuleState& s) { return s.init_stopped; }}},
         [](const LogLine&, RuleState& s) { s.run_started = true; }});
    add({"run_stop",
         Occurrence::kExactlyOne,
         {},
         {{"after run_start", [](const LogLine&, const RuleState& s) { return s.run_started; }},
          {"metadata has status",
           [](const LogLine& l, const RuleState&) { return has_metadata(l, "status"); }}},
         nullptr});
    add({"block_start",
         Occurrence::kAtLeastOneOf,
         {"epoch_start"},
         {{"after run_start", [](const LogLine&, const RuleState& s) { return s.run_started; }},
          metadata_has_either("epoch_count", "samples_count"),
          {"first_epoch_num with epoch_count",
           [](const LogLine& l, const RuleState&) {
               return !has_metadata(l, "epoch_count") || has_metadata(l, "first_epoch_num");
           }},
          {"epoch_count > 0",
           [](const LogLine& l, const RuleState&) { return metadata_at_least(l, "epoch_count", 0, true); }},
          {"samples_count >= 0",
           [](const LogLine& l, const RuleState&) {
               return metadata_at_least(l, "samples_count", 0, false);
           }}},
         nullptr});
    add({"block_stop",
         Occurrence::kAtLeastOneOf,
         {"epoch_stop"},
         {metadata_has_either("first_epoch_num", "samples_count")},
         nullptr});
    for (const char* key : {"epoch_start", "epoch_stop"}) {
        add({key,
             Occurrence::kAtLeastOneOf,
             {std::string(key) == "epoch_start" ? "block_start" : "block_stop"},
             {{"metadata has epoch_num",
               [](const LogLine& l, const RuleState&) { return has_metadata(l, "epoch_num"); }}},
             nullptr});
    }
    add({"eval_start",
         Occurrence::kAtLeastOneOf,
         {"block_start"},
         {metadata_has_either("epoch_num", "samples_count")},
         nullptr});
    add({"eval_stop",
         Occurrence::kAtLeastOneOf,
         {"block_stop"},
         {metadata_has_either("epoch_num", "samples_count")},
         nullptr});
    add({"eval_accuracy",
         Occurrence::kAtLeastOne,
         {},
         {metadata_has_either("epoch_num", "samples_count")},
         nullptr});
    add({"train_samples", Occurrence::kExactlyOne, {}, {kNotEmpty}, nullptr});
    add({"eval_samples", Occurrence::kExactlyOne, {}, {kNotEmpty}, nullptr});
    return f;
}

RulesFile closed_common_rules() {
    RulesFile f{"closed_common", {}};
    f.keys.push_back({"submission_benchmark",
                      Occurrence::kExactlyOne,
                      {},
                      {value_in({"resnet", "ssd", "stable_diffusion", "maskrcnn", "gpt3", "dlrm_dcnv2",
                                 "bert", "rnnt", "unet3d", "gnn", "llama2_70b_lora"})},
                      nullptr});
    f.keys.push_back({"gradient_accumulation_steps",
                      Occurrence::kExactlyOne,
                      {},
                      {{"value > 0",
                        [](const LogLine& l, const RuleState&) {
                            return l.event.value.is_number() && l.event.value.get<double>() > 0;
                        }}},
                      nullptr});
    return f;
}

RulesFile closed_llama2_70b_lora_rules() {
    RulesFile f{"closed_llama2_70b_lora", {}};
    for (const char* key :
         {"global_batch_size", "opt_base_learning_rate", "lora_alpha", "opt_learning_rate_training_steps",
          "opt_gradient_clip_norm", "opt_adamw_weight_decay", "gradient_accumulation_steps"}) {
        f.keys.push_back({key, Occurrence::kExactlyOne, {}, {}, nullptr});
    }
    f.keys.push_back({"lora_rank",
                      Occurrence::kExactlyOne,
                      {},
                      {{"value == 16",
                        [](const LogLine& l, const RuleState&) {
                            return l.event.value.is_number() && l.event.value.get<double>() == 16;
                        }}},
                      nullptr});
    f.keys.push_back({"eval_accuracy",
                      Occurrence::kAtLeastOne,
                      {},
                      {{"metadata has samples_count",
                        [](const LogLine& l, const RuleState&) { return has_metadata(l, "samples_count"); }}},
                      nullptr});
    return f;
}

std::string describe(const LogLine& line) {
    return "line " + std::to_string(line.index) + " (" + line.event.key + " " +
           format_python_json(line.event.value) + " " + format_python_json(line.event.metadata) + ")";
}

std::string occurrence_text(const KeyRule& rule) {
    switch (rule.occurrence) {
        case Occurrence::kExactlyOne:
            return rule.key + " occurs exactly once";
        case Occurrence::kAtLeastOne:
            return rule.key + " occurs at least once";
        case Occurrence::kAtLeastOneOf: {
            std::string text = rule.key;
            for (const std::string& alternative : rule.alternatives)
                text += " or " + alternative;
            return text + " occurs at least once";
        }
        case Occurrence::kAny:
            break;
    }
    return "";
}

// Walks the log once for one rules file; outcomes are appended to `report`.
void apply_rules(const RulesFile& file, const std::vector<LogLine>& lines, MlperfComplianceReport& report) {
    std::map<std::string, size_t> count;
    for (const LogLine& line : lines)
        ++count[line.event.key];

    std::map<std::string, std::vector<std::string>> failures;  // rule id -> failures
    std::vector<std::string> ids;
    auto id_of = [&file](const KeyRule& rule, const std::string& what) {
        return file.name + ": " + rule.key + ": " + what;
    };
    for (const KeyRule& rule : file.keys) {
        if (rule.occurrence != Occurrence::kAny) ids.push_back(file.name + ": " + occurrence_text(rule));
        for (const LineCheck& check : rule.checks)
            ids.push_back(id_of(rule, check.what));
    }

    RuleState state;
    std::map<std::string, bool> submission_key_seen;  // submission_* keys are judged on their first line
    for (const LogLine& line : lines) {
        auto rule = std::find_if(file.keys.begin(), file.keys.end(),
                                 [&line](const KeyRule& r) { return r.key == line.event.key; });
        if (rule == file.keys.end()) continue;  // keys the rules do not name are allowed
        const bool is_submission = line.event.key.rfind("submission_", 0) == 0;
        if (is_submission && submission_key_seen[line.event.key]) continue;
        submission_key_seen[line.event.key] = true;
        for (const LineCheck& check : rule->checks) {
            if (!check.holds(line, state)) failures[id_of(*rule, check.what)].push_back(describe(line));
        }
        if (rule->after) rule->after(line, state);
    }

    for (const KeyRule& rule : file.keys) {
        const size_t n = count[rule.key];
        std::string problem;
        if (rule.occurrence == Occurrence::kExactlyOne && n != 1) {
            problem = "found " + std::to_string(n);
        } else if (rule.occurrence == Occurrence::kAtLeastOne && n < 1) {
            problem = "found none";
        } else if (rule.occurrence == Occurrence::kAtLeastOneOf) {
            size_t any = n;
            for (const std::string& alternative : rule.alternatives)
                any += count[alternative];
            if (any == 0) problem = "found none";
        }
        if (!problem.empty()) failures[file.name + ": " + occurrence_text(rule)].push_back(problem);
    }
    for (const std::string& id : ids)
        report.rules.push_back({id, failures[id]});
}

// The convergence target of llama2_70b_lora: at least one eval_accuracy in (0, 0.925].
MlperfRuleOutcome convergence(const std::vector<LogLine>& lines) {
    MlperfRuleOutcome outcome{std::string(kMlperfConvergenceRule), {}};
    double best = std::numeric_limits<double>::infinity();
    for (const LogLine& line : lines) {
        if (line.event.key != mllog_key::kEvalAccuracy || !line.event.value.is_number()) continue;
        const double v = line.event.value.get<double>();
        if (v > 0 && v <= 0.925) return outcome;
        best = std::min(best, v);
    }
    outcome.failures.push_back(std::isinf(best) ? "no numeric eval_accuracy"
                                                : "best eval_accuracy " + format_python_json(best));
    return outcome;
}

// The first value of `key` as a string, or "".
std::string first_string(const std::vector<LogLine>& lines, const std::string& key) {
    for (const LogLine& line : lines) {
        if (line.event.key == key && line.event.value.is_string()) return line.event.value.get<std::string>();
    }
    return "";
}

}  // namespace

bool MlperfComplianceReport::passed_except(const std::vector<std::string>& excepted) const {
    return std::all_of(rules.begin(), rules.end(), [&excepted](const MlperfRuleOutcome& r) {
        return r.passed() || std::find(excepted.begin(), excepted.end(), r.id) != excepted.end();
    });
}

std::string MlperfComplianceReport::failures_text(const std::vector<std::string>& excepted) const {
    std::string text;
    for (const MlperfRuleOutcome& r : rules) {
        if (std::find(excepted.begin(), excepted.end(), r.id) != excepted.end()) continue;
        for (const std::string& failure : r.failures)
            text += "FAIL " + r.id + ": " + failure + "\n";
    }
    return text;
}

MlperfComplianceReport check_mlperf_compliance(std::string_view log_text) {
    MlperfComplianceReport report;
    std::vector<LogLine> lines;
    MlperfRuleOutcome parsing{"parser: every MLLOG line is JSON with time_ms, key, value and metadata", {}};
    size_t index = 0;
    std::istringstream in{std::string(log_text)};
    std::string text;
    while (std::getline(in, text)) {
        const size_t marker = text.find(kMllogPrefix);
        if (marker == std::string::npos) continue;
        const nlohmann::json object =
            nlohmann::json::parse(text.substr(marker + kMllogPrefix.size()), nullptr,
                                  /*allow_exceptions=*/false);
        const bool complete = object.is_object() && object.contains("time_ms") &&
                              object["time_ms"].is_number() && object.contains("key") &&
                              object["key"].is_string() && object.contains("value") &&
                              object.contains("metadata");
        if (!complete) {
            parsing.failures.push_back("line " + std::to_string(index++) + ": " + text.substr(marker));
            continue;
        }
        const MllogParseResult parsed = parse_mllog_line(text);
        lines.push_back({index++, object["time_ms"].get<double>(), parsed.event});
    }
    report.rules.push_back(parsing);

    apply_rules(common_rules(), lines, report);
    const std::string division = first_string(lines, "submission_division");
    const std::string benchmark = first_string(lines, "submission_benchmark");
    if (division != "closed" || benchmark != "llama2_70b_lora") {
        report.rules.push_back(
            {"coverage: closed llama2_70b_lora",
             {"these rules cover the closed division's llama2_70b_lora only; the log names division \"" +
              division + "\", benchmark \"" + benchmark + "\""}});
        return report;
    }
    apply_rules(closed_common_rules(), lines, report);
    apply_rules(closed_llama2_70b_lora_rules(), lines, report);
    report.rules.push_back(convergence(lines));
    return report;
}

}  // namespace slipway
