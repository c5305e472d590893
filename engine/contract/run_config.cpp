// RunConfig <-> JSON (unknown keys and wrong types reported by JSON pointer), derived values, and the
// file helpers. Range and cross-field checks are in run_config_validate.cpp.
#include "contract/run_config.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "contract/file_system.h"
#include "contract/hf_flags.h"
#include "contract/json_text.h"
#include "contract/run_config_schema.h"

namespace slipway {
namespace {

// RFC 6901 escaping of one reference token.
std::string escape_pointer_token(const std::string& token) {
    std::string out;
    for (char c : token) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

std::vector<std::string> keys_of_section(const std::string& section) {
    std::vector<std::string> keys;
    for (const FieldSpec& f : run_config_fields()) {
        if (f.section == section) keys.push_back(f.key);
    }
    return keys;
}

// "unknown field" with the best hint we can give: a near miss in the same object, or the same key in
// another section (e.g. learning_rate written at the top level).
std::string unknown_key_message(const std::string& section, const std::string& key) {
    std::vector<std::string> candidates = keys_of_section(section);
    if (section.empty()) {
        for (const std::string& s : run_config_sections())
            candidates.push_back(s);
    }
    std::string near = closest_match(key, candidates);
    if (near.empty() && key.size() >= 3) {  // "gpus" -> "gpus_per_node"
        for (const std::string& c : candidates) {
            if (c.compare(0, key.size(), key) == 0) {
                near = c;
                break;
            }
        }
    }
    if (!near.empty()) return "unknown field (did you mean \"" + near + "\"?)";
    for (const FieldSpec& f : run_config_fields()) {
        if (f.key == key && f.section != section) return "unknown field (did you mean " + f.pointer() + "?)";
    }
    for (const HfFlag& flag : hf_flags()) {  // a training-script flag name used as a key: "lora_rank"
        if (flag.name == key && flag.target.rfind('/', 0) == 0) {
            return "unknown field (did you mean " + flag.target + "? the script flag --" + key + " sets it)";
        }
    }
    for (const FieldSpec& f : run_config_fields()) {
        if (closest_match(key, {f.key}) == f.key) return "unknown field (did you mean " + f.pointer() + "?)";
    }
    return "unknown field";
}

void parse_field(const FieldSpec& field, const nlohmann::json& value, ParsedRunConfig& out) {
    const std::string type_error = check_json_type(field, value);
    if (!type_error.empty()) {
        out.problems.push_back({field.pointer(), type_error});
        return;
    }
    field.set(out.config, value);
}

}  // namespace

int64_t RunConfig::tasks_per_node() const {
    if (slurm.ntasks_per_node) return *slurm.ntasks_per_node;
    return slurm.gpus_per_node > 0 ? slurm.gpus_per_node : 1;
}

int64_t RunConfig::world_size() const {
    return slurm.nodes * tasks_per_node();
}

int64_t RunConfig::global_batch_size() const {
    return training.per_device_train_batch_size * training.gradient_accumulation_steps * world_size();
}

int64_t RunConfig::tokens_per_step() const {
    return global_batch_size() * data.block_size;
}

bool RunConfig::eval_higher_is_better() const {
    return eval.metric == "token_accuracy";
}

std::string ConfigProblem::to_string() const {
    return (pointer.empty() ? std::string("/") : pointer) + ": " + (is_error() ? "" : "warning: ") + message;
}

bool has_errors(const ConfigProblems& problems) {
    for (const ConfigProblem& p : problems) {
        if (p.is_error()) return true;
    }
    return false;
}

std::string format_problems(const ConfigProblems& problems) {
    std::string out;
    for (const ConfigProblem& p : problems)
        out += p.to_string() + "\n";
    return out;
}

ParsedRunConfig parse_run_config(const nlohmann::json& document) {
    ParsedRunConfig out;
    if (!document.is_object()) {
        out.problems.push_back({"", "a run config must be a JSON object, got " + short_json(document)});
        return out;
    }
    const std::vector<std::string>& sections = run_config_sections();
    for (const auto& [key, value] : document.items()) {
        if (std::find(sections.begin(), sections.end(), key) != sections.end()) {
            if (!value.is_object()) {
                out.problems.push_back({"/" + key, "must be an object, got " + short_json(value)});
                continue;
            }
            for (const auto& [field_key, field_value] : value.items()) {
                const FieldSpec* field = find_field("/" + key + "/" + field_key);
                if (field == nullptr) {
                    out.problems.push_back({"/" + key + "/" + escape_pointer_token(field_key),
                                            unknown_key_message(key, field_key)});
                    continue;
                }
                parse_field(*field, field_value, out);
            }
            continue;
        }
        const FieldSpec* field = find_field("/" + key);
        if (field == nullptr) {
            out.problems.push_back({"/" + escape_pointer_token(key), unknown_key_message("", key)});
            continue;
        }
        parse_field(*field, value, out);
    }
    return out;
}

nlohmann::ordered_json to_json(const RunConfig& config) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const FieldSpec& f : run_config_fields()) {
        if (f.section.empty()) {
            out[f.key] = f.get(config);
        } else {
            out[f.section][f.key] = f.get(config);
        }
    }
    return out;
}

ValidationContext validation_context_for(const RunConfig& config) {
    ValidationContext context;
    if (config.model.path.empty()) return context;
    const std::filesystem::path model_config = std::filesystem::path(config.model.path) / "config.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(model_config, ec)) return context;
    Result<nlohmann::json> json = read_json_file(model_config.string());
    if (!json.ok() || !json->is_object()) return context;
    const auto it = json->find("max_position_embeddings");
    if (it != json->end() && it->is_number_integer()) context.model_max_positions = it->get<int64_t>();
    return context;
}

Result<nlohmann::json> read_json_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Result<nlohmann::json>::Error(path + ": cannot open file");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return parse_json_text(buffer.str(), path);
}

Result<nlohmann::json> read_run_document(const std::string& path) {
    Result<nlohmann::json> json = read_json_file(path);
    if (!json.ok()) return json;
    if (json->is_object() && json->contains("config") && json->contains("engine_version") &&
        (*json)["config"].is_object()) {
        return nlohmann::json((*json)["config"]);
    }
    return json;
}

Result<RunConfig> load_run_config(const std::string& path) {
    Result<nlohmann::json> json = read_run_document(path);
    if (!json.ok()) return json.status();
    ParsedRunConfig parsed = parse_run_config(*json);
    ConfigProblems problems = parsed.problems;
    const ConfigProblems checks = validate(parsed.config, validation_context_for(parsed.config));
    problems.insert(problems.end(), checks.begin(), checks.end());
    if (!has_errors(problems)) return parsed.config;
    std::string message = path + ": invalid run config:";
    for (const ConfigProblem& p : problems) {
        if (p.is_error()) message += "\n  " + p.to_string();
    }
    return Result<RunConfig>::Error(message);
}

Status save_run_config(const RunConfig& config, const std::string& path) {
    return write_file_atomically(path, to_json(config).dump(2) + "\n");
}

}  // namespace slipway
