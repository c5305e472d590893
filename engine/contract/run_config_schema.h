// The declarative table of every run config field: JSON pointer, type, default, range, help text, and
// how it maps to RunConfig. Loading, saving, range validation, HF-style flags and the documentation
// printed by `slipway-engine config schema` are all driven by this one table.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/run_config.h"

namespace slipway {

enum class FieldType {
    kBool,
    kInt,
    kNumber,
    kString,
    kStringList,
    kStringIntMap,
    kStringNumberMap,
    kStringStringMap,
};

const char* field_type_name(FieldType type);

struct FieldSpec {
    std::string section;  // "" for top-level fields
    std::string key;
    FieldType type = FieldType::kString;
    bool nullable = false;  // JSON null is allowed (and means "unset")
    std::string help;
    // How the editor shows the field, in plain English (the app translates it for display, context
    // "RunConfigField"): a label such as "Validation split (%)", the group of related fields on its page
    // ("Batch", "Schedule"), and whether it is folded away as advanced until asked for.
    std::string label;
    std::string group;
    bool advanced = false;
    std::optional<double> min;
    bool min_exclusive = false;
    std::optional<double> max;
    bool max_exclusive = false;
    std::vector<std::string> choices;  // allowed values of a string field (empty = any)

    std::function<nlohmann::ordered_json(const RunConfig&)> get;
    // Stores a JSON value that already passed check_json_type() for this field.
    std::function<void(RunConfig&, const nlohmann::json&)> set;

    std::string pointer() const;     // "/training/learning_rate"
    std::string range_text() const;  // "> 0", "[0, 1)", "linear | cosine", "" when unrestricted
};

// Every field, in the stable order used when a config is saved.
const std::vector<FieldSpec>& run_config_fields();
// Section names in order ("model", "tokenizer", ...).
const std::vector<std::string>& run_config_sections();
// The field at a pointer such as "/training/learning_rate", or nullptr.
const FieldSpec* find_field(const std::string& pointer);

// Empty when `value` has the field's JSON type; else a message such as "must be a number, got "abc"".
std::string check_json_type(const FieldSpec& field, const nlohmann::json& value);
// Empty when a value of the right type is inside the field's range and choices.
std::string check_range(const FieldSpec& field, const nlohmann::json& value);

// A compact rendering of a JSON value for messages ("-1", "\"abc\"", "[...]").
std::string short_json(const nlohmann::json& value);

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(const std::string& a, const std::string& b);
// The closest candidate within a small distance, or "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// Markdown documentation of every field: pointer, label, type, default, range, help.
std::string run_config_schema_markdown();

}  // namespace slipway
