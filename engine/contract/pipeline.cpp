// Pipelines (see pipeline.h): one table of step kinds drives parsing, validation, the engine's command line
// and the help text; references are checked once at parse time and substituted when a step is placed.
#include "contract/pipeline.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace slipway {
namespace {

using json = nlohmann::json;

enum class FieldType { kPath, kOut, kText, kInt, kChoice, kArgs };

struct Field {
    const char* key;
    const char* flag;  // the engine's option; nullptr: not passed as an option
    FieldType type;
    bool required;
    std::vector<std::string> choices;  // kChoice: the first is the default
    const char* help;
};

struct Kind {
    const char* name;
    const char* help;
    std::vector<Field> fields;
};

// clang-format off
const std::vector<Kind>& kinds() {
    static const std::vector<Kind> table = {
        {"tokenizer", "slipway-engine tokenizer train|extend: a new BPE or Unigram tokenizer, or the base one extended",
         {{"mode", nullptr, FieldType::kChoice, false, {"train", "extend"}, "train a new tokenizer or extend --base"},
          {"type", "--type", FieldType::kChoice, false, {"bpe", "unigram"}, "train: the model type"},
          {"base", "--base", FieldType::kPath, false, {}, "extend: the tokenizer.json to extend (required then)"},
          {"corpus", "--corpus", FieldType::kPath, true, {}, "JSONL corpus"},
          {"field", "--field", FieldType::kText, false, {}, "JSON field holding the text"},
          {"vocab_size", "--vocab-size", FieldType::kInt, false, {}, "train: tokens in the vocabulary"},
          {"min_frequency", "--min-frequency", FieldType::kInt, false, {}, "train: least count of a pair"},
          {"add", "--add", FieldType::kInt, false, {}, "extend: tokens to add (required then)"},
          {"out", "--out", FieldType::kOut, true, {}, "output tokenizer.json (the step's out)"},
          {"args", nullptr, FieldType::kArgs, false, {}, "more engine arguments, passed through as given"}}},
        {"adapt-vocab", "slipway-engine adapt-vocab: the model moved onto the new tokenizer",
         {{"model", "--model", FieldType::kPath, true, {}, "HF model folder"},
          {"old_tokenizer", "--old-tokenizer", FieldType::kPath, true, {}, "the model's tokenizer.json"},
          {"new_tokenizer", "--new-tokenizer", FieldType::kPath, true, {}, "the new tokenizer.json"},
          {"out", "--out", FieldType::kOut, true, {}, "output HF folder (the step's out)"}}},
        {"train", "slipway-engine train: an ordinary run config (inline object, or a path to one); out = its output folder",
         {{"config", nullptr, FieldType::kText, true, {}, "run config object, or a path relative to the pipeline file"}}},
        {"lep", "slipway-engine lep: the adapted embeddings propagated onto the instruct model",
         {{"base", "--base", FieldType::kPath, true, {}, "the base HF model folder"},
          {"instruct", "--instruct", FieldType::kPath, true, {}, "the instruct HF model folder"},
          {"adapted", "--adapted", FieldType::kPath, true, {}, "the adapted base with trained embeddings"},
          {"method", "--method", FieldType::kChoice, false, {"conversion", "swap", "overlap"}, "propagation method"},
          {"out", "--out", FieldType::kOut, true, {}, "output HF folder (the step's out)"}}},
        {"eval", "slipway-engine eval: evaluation tasks; the JSON it prints is written to out",
         {{"model", "--model", FieldType::kPath, true, {}, "HF model folder"},
          {"adapter", "--adapter", FieldType::kPath, false, {}, "PEFT LoRA adapter folder"},
          {"tokenizer", "--tokenizer", FieldType::kPath, false, {}, "tokenizer.json"},
          {"tasks", "--tasks", FieldType::kPath, true, {}, "task file (JSON)"},
          {"limit", "--limit", FieldType::kInt, false, {}, "at most N samples per task"},
          {"out", nullptr, FieldType::kOut, true, {}, "results JSON file (the step's out)"}}},
    };
    return table;
}
// clang-format on

const Kind* find_kind(const std::string& name) {
    for (const Kind& k : kinds())
        if (name == k.name) return &k;
    return nullptr;
}

std::string escape_pointer_token(const std::string& token) {
    std::string out;
    for (char c : token) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

// Calls fn(pointer, string) for every string in `value`.
void for_each_string(const json& value, const std::string& pointer,
                     const std::function<void(const std::string&, const std::string&)>& fn) {
    if (value.is_string()) {
        fn(pointer, value.get<std::string>());
    } else if (value.is_object()) {
        for (auto it = value.begin(); it != value.end(); ++it)
            for_each_string(it.value(), pointer + "/" + escape_pointer_token(it.key()), fn);
    } else if (value.is_array()) {
        for (size_t i = 0; i < value.size(); ++i)
            for_each_string(value[i], pointer + "/" + std::to_string(i), fn);
    }
}

// Replaces every ${...} in `text` through `lookup` (which returns an error for an unknown reference).
Result<std::string> substitute(const std::string& text,
                               const std::function<Result<std::string>(const std::string&)>& lookup) {
    std::string out;
    size_t pos = 0;
    while (true) {
        const size_t start = text.find("${", pos);
        if (start == std::string::npos) break;
        const size_t end = text.find('}', start + 2);
        if (end == std::string::npos) return Status::Error("\"${\" without a closing \"}\"");
        out.append(text, pos, start - pos);
        Result<std::string> value = lookup(text.substr(start + 2, end - start - 2));
        if (!value.ok()) return value.status();
        out += *value;
        pos = end + 1;
    }
    out.append(text, pos, std::string::npos);
    return out;
}

// "steps.NAME.out" -> NAME; "" when the reference is not of that form.
std::string step_reference(const std::string& ref) {
    static const std::regex form(R"(steps\.([A-Za-z0-9_-]+)\.out)");
    std::smatch m;
    return std::regex_match(ref, m, form) ? m[1].str() : std::string();
}

// The lookup of references for step `index`: vars, ${run}, and earlier steps' outputs from `outs`.
std::function<Result<std::string>(const std::string&)> lookup_for(
    const Pipeline& pipeline, size_t index, const std::string& run_dir,
    const std::map<std::string, std::string>& outs) {
    return [&pipeline, index, run_dir, &outs](const std::string& ref) -> Result<std::string> {
        if (ref == "run") return run_dir;
        if (ref.rfind("vars.", 0) == 0) {
            auto it = pipeline.vars.find(ref.substr(5));
            if (it == pipeline.vars.end())
                return Status::Error("${" + ref + "}: no variable \"" + ref.substr(5) + "\" in /vars");
            return substitute(it->second, [&](const std::string& inner) -> Result<std::string> {
                if (inner == "run") return run_dir;
                return Status::Error("${" + inner + "}: a variable may only use ${run}");
            });
        }
        const std::string step = step_reference(ref);
        if (step.empty())
            return Status::Error("${" + ref +
                                 "}: unknown reference (use ${vars.NAME}, ${steps.NAME.out} or ${run})");
        size_t at = pipeline.steps.size();
        for (size_t i = 0; i < pipeline.steps.size(); ++i)
            if (pipeline.steps[i].name == step) at = i;
        if (at == pipeline.steps.size())
            return Status::Error("${" + ref + "}: no step named \"" + step + "\"");
        if (at == index) return Status::Error("${" + ref + "}: a step cannot use its own output");
        if (at > index)
            return Status::Error("${" + ref + "}: step \"" + step + "\" runs later (steps/" +
                                 std::to_string(at) +
                                 "); a step may only use the outputs of steps before it");
        auto it = outs.find(step);
        if (it == outs.end()) return Status::Error("${" + ref + "}: step \"" + step + "\" has no output yet");
        return it->second;
    };
}

bool valid_name(const std::string& name) {
    static const std::regex form(R"([A-Za-z0-9_-]{1,64})");
    return std::regex_match(name, form);
}

bool has_control_char(const std::string& text) {
    for (unsigned char c : text)
        if (c < 0x20 || c == 0x7f) return true;
    return false;
}

// Placeholders that let a step be checked before the chain has run: absolute, so run configs validate.
std::map<std::string, std::string> placeholder_outs(const Pipeline& pipeline) {
    std::map<std::string, std::string> outs;
    for (const PipelineStep& s : pipeline.steps)
        outs[s.name] = "/slipway-pipeline/steps/" + s.name + "/out";
    return outs;
}
const char* kPlaceholderRun = "/slipway-pipeline/run";

void check_step_fields(const Kind& kind, const json& spec, const std::string& pointer,
                       ConfigProblems& problems) {
    auto error = [&](const std::string& where, const std::string& message) {
        problems.push_back({where, message, ConfigProblem::Severity::kError});
    };
    std::set<std::string> known = {"name", "kind", "comment"};
    if (!kind.fields.empty() && std::string(kind.name) != "train") known.insert({"cpus", "time"});
    for (const Field& f : kind.fields)
        known.insert(f.key);
    for (auto it = spec.begin(); it != spec.end(); ++it) {
        if (!known.count(it.key()))
            error(pointer + "/" + escape_pointer_token(it.key()),
                  "unknown field for a \"" + std::string(kind.name) + "\" step");
    }
    for (const Field& f : kind.fields) {
        const std::string where = pointer + "/" + f.key;
        if (!spec.contains(f.key)) {
            if (f.required) error(where, "is required for a \"" + std::string(kind.name) + "\" step");
            continue;
        }
        const json& v = spec.at(f.key);
        switch (f.type) {
            case FieldType::kPath:
            case FieldType::kOut:
            case FieldType::kText:
                if (std::string(kind.name) == "train") break;  // config: checked by the caller
                if (!v.is_string() || v.get<std::string>().empty())
                    error(where, "must be a non-empty string");
                else if (has_control_char(v.get<std::string>()))
                    error(where, "must not contain control characters");
                break;
            case FieldType::kInt:
                if (!v.is_number_integer() || v.get<int64_t>() <= 0) error(where, "must be an integer > 0");
                break;
            case FieldType::kChoice: {
                const bool ok = v.is_string() && std::find(f.choices.begin(), f.choices.end(),
                                                           v.get<std::string>()) != f.choices.end();
                if (!ok) {
                    std::string list;
                    for (const std::string& c : f.choices)
                        list += (list.empty() ? "" : ", ") + c;
                    error(where, "must be one of " + list);
                }
                break;
            }
            case FieldType::kArgs:
                if (!v.is_array()) {
                    error(where, "must be an array of strings");
                    break;
                }
                for (size_t i = 0; i < v.size(); ++i)
                    if (!v[i].is_string() || has_control_char(v[i].get<std::string>()))
                        error(where + "/" + std::to_string(i), "must be a string without control characters");
                break;
        }
    }
    if (std::string(kind.name) == "tokenizer") {
        const bool extend = spec.value("mode", std::string("train")) == "extend";
        if (extend && !spec.contains("base")) error(pointer + "/base", "is required when mode is \"extend\"");
        if (extend && !spec.contains("add")) error(pointer + "/add", "is required when mode is \"extend\"");
        if (!extend && spec.contains("base"))
            error(pointer + "/base", "only applies when mode is \"extend\"");
        if (extend && spec.contains("type")) error(pointer + "/type", "only applies when mode is \"train\"");
    }
}

void read_resources(PipelineStep& step, const json& spec, const std::string& pointer,
                    ConfigProblems& problems) {
    if (spec.contains("cpus")) {
        const json& v = spec.at("cpus");
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1024)
            problems.push_back(
                {pointer + "/cpus", "must be an integer in [1, 1024]", ConfigProblem::Severity::kError});
        else
            step.cpus = v.get<int>();
    }
    if (spec.contains("time")) {
        static const std::regex form(R"((\d+-)?\d{1,2}:\d{2}:\d{2}|\d+)");
        const json& v = spec.at("time");
        if (!v.is_string() || !std::regex_match(v.get<std::string>(), form))
            problems.push_back({pointer + "/time", "must be a Slurm time like \"01:00:00\" or \"1-00:00:00\"",
                                ConfigProblem::Severity::kError});
        else
            step.time = v.get<std::string>();
    }
}

}  // namespace

bool is_pipeline_document(const json& document) {
    if (!document.is_object()) return false;
    if (document.contains("schema") && document["schema"].is_string())
        return document["schema"].get<std::string>() == kPipelineSchema;
    return document.contains("steps") && !document.contains("training") && !document.contains("model");
}

ParsedPipeline parse_pipeline(const json& document, const std::string& base_dir) {
    ParsedPipeline parsed;
    Pipeline& p = parsed.pipeline;
    ConfigProblems& problems = parsed.problems;
    auto error = [&](const std::string& where, const std::string& message) {
        problems.push_back({where, message, ConfigProblem::Severity::kError});
    };
    if (!document.is_object()) {
        error("", "a pipeline is a JSON object");
        return parsed;
    }
    for (auto it = document.begin(); it != document.end(); ++it) {
        static const std::set<std::string> known = {"schema", "name", "comment", "vars", "steps"};
        if (!known.count(it.key()))
            error("/" + escape_pointer_token(it.key()), "unknown field in a pipeline");
    }
    if (!document.contains("schema") || document["schema"] != kPipelineSchema)
        error("/schema", std::string("must be \"") + kPipelineSchema + "\"");
    if (!document.contains("name") || !document["name"].is_string() || !valid_name(document["name"]))
        error("/name", "is required: 1-64 characters of letters, digits, '_' and '-'");
    else
        p.name = document["name"].get<std::string>();
    if (document.contains("vars")) {
        const json& vars = document["vars"];
        if (!vars.is_object())
            error("/vars", "must be an object of strings");
        else
            for (auto it = vars.begin(); it != vars.end(); ++it) {
                const std::string where = "/vars/" + escape_pointer_token(it.key());
                if (!valid_name(it.key()))
                    error(where, "variable names are letters, digits, '_' and '-'");
                else if (!it.value().is_string() || has_control_char(it.value().get<std::string>()))
                    error(where, "must be a string without control characters");
                else
                    p.vars[it.key()] = it.value().get<std::string>();
            }
    }
    if (!document.contains("steps") || !document["steps"].is_array() || document["steps"].empty()) {
        error("/steps", "is required: a non-empty array of steps");
        return parsed;
    }

    // Names and kinds first, so references can be checked against the whole list.
    const json& steps = document["steps"];
    std::set<std::string> names;
    for (size_t i = 0; i < steps.size(); ++i) {
        const std::string pointer = "/steps/" + std::to_string(i);
        PipelineStep step;
        if (!steps[i].is_object()) {
            error(pointer, "a step is an object");
            p.steps.push_back(step);
            continue;
        }
        step.spec = steps[i];
        if (!step.spec.contains("name") || !step.spec["name"].is_string() || !valid_name(step.spec["name"]))
            error(pointer + "/name", "is required: 1-64 characters of letters, digits, '_' and '-'");
        else if (!names.insert(step.spec["name"].get<std::string>()).second)
            error(pointer + "/name",
                  "\"" + step.spec["name"].get<std::string>() + "\" is used by an earlier step");
        else
            step.name = step.spec["name"].get<std::string>();
        const Kind* kind = step.spec.contains("kind") && step.spec["kind"].is_string()
                               ? find_kind(step.spec["kind"].get<std::string>())
                               : nullptr;
        if (!kind) {
            error(pointer + "/kind", "must be one of tokenizer, adapt-vocab, train, lep, eval");
        } else {
            step.kind = kind->name;
            check_step_fields(*kind, step.spec, pointer, problems);
            read_resources(step, step.spec, pointer, problems);
        }
        // A train step's config from a file becomes inline.
        if (step.kind == "train" && step.spec.contains("config")) {
            json& config = step.spec["config"];
            if (config.is_string()) {
                std::string path = config.get<std::string>();
                if (!path.empty() && path[0] != '/' && !base_dir.empty()) path = base_dir + "/" + path;
                Result<json> doc = read_run_document(path);
                if (!doc.ok())
                    error(pointer + "/config", doc.error());
                else
                    config = *doc;
            } else if (!config.is_object()) {
                error(pointer + "/config", "must be a run config object or a path to one");
            }
        }
        p.steps.push_back(step);
    }

    // References: every ${...} in a step must name a variable, ${run}, or an earlier step.
    const std::map<std::string, std::string> outs = placeholder_outs(p);
    for (size_t i = 0; i < p.steps.size(); ++i) {
        PipelineStep& step = p.steps[i];
        const auto lookup = lookup_for(p, i, kPlaceholderRun, outs);
        for_each_string(
            step.spec, "/steps/" + std::to_string(i), [&](const std::string& where, const std::string& s) {
                Result<std::string> value = substitute(s, [&](const std::string& ref) -> Result<std::string> {
                    Result<std::string> v = lookup(ref);
                    const std::string used = step_reference(ref);
                    if (v.ok() && !used.empty() &&
                        std::find(step.uses.begin(), step.uses.end(), used) == step.uses.end())
                        step.uses.push_back(used);
                    return v;
                });
                if (!value.ok()) error(where, value.error());
            });
    }
    if (has_errors(problems)) return parsed;

    // Each train step's config must be a valid run config once references are in place.
    for (size_t i = 0; i < p.steps.size(); ++i) {
        if (!p.steps[i].is_training()) continue;
        StepContext context;
        context.run_dir = kPlaceholderRun;
        context.outs = outs;
        Result<ResolvedStep> r = resolve_step(p, i, context);
        if (!r.ok()) error("/steps/" + std::to_string(i) + "/config", r.error());
    }
    return parsed;
}

Result<Pipeline> load_pipeline(const std::string& path) {
    Result<json> document = read_json_file(path);
    if (!document.ok()) return document.status();
    const size_t slash = path.find_last_of('/');
    const std::string base_dir = slash == std::string::npos ? "." : path.substr(0, slash);
    ParsedPipeline parsed = parse_pipeline(*document, base_dir);
    if (has_errors(parsed.problems)) {
        std::string message = path + ": pipeline is not valid:";
        for (const ConfigProblem& problem : parsed.problems)
            if (problem.is_error()) message += "\n  " + problem.to_string();
        return Status::Error(message);
    }
    return parsed.pipeline;
}

Result<ResolvedStep> resolve_step(const Pipeline& pipeline, size_t index, const StepContext& context) {
    if (index >= pipeline.steps.size()) return Status::Error("no step " + std::to_string(index));
    const PipelineStep& step = pipeline.steps[index];
    const std::string pointer = "/steps/" + std::to_string(index);
    const auto lookup = lookup_for(pipeline, index, context.run_dir, context.outs);
    ResolvedStep resolved;

    if (step.is_training()) {
        json config = step.spec.at("config");
        // Substitute every string of the config in place.
        std::vector<std::pair<std::string, std::string>> replaced;
        Status failed = Status::Ok();
        for_each_string(config, "", [&](const std::string& where, const std::string& s) {
            if (!failed.ok()) return;
            Result<std::string> v = substitute(s, lookup);
            if (!v.ok())
                failed = Status::Error(pointer + "/config" + where + ": " + v.error());
            else if (*v != s)
                replaced.emplace_back(where, *v);
        });
        if (!failed.ok()) return failed;
        for (const auto& [where, value] : replaced)
            config[json::json_pointer(where)] = value;
        ParsedRunConfig parsed = parse_run_config(config);
        ConfigProblems problems = parsed.problems;
        if (!has_errors(problems)) {
            ConfigProblems more = validate(parsed.config);
            problems.insert(problems.end(), more.begin(), more.end());
        }
        if (has_errors(problems)) {
            std::string message = "run config of step \"" + step.name + "\" is not valid:";
            for (const ConfigProblem& problem : problems)
                if (problem.is_error()) message += "\n  " + pointer + "/config" + problem.to_string();
            return Status::Error(message);
        }
        resolved.config = parsed.config;
        resolved.out = parsed.config.training.output_dir;
        return resolved;
    }

    const Kind* kind = find_kind(step.kind);
    if (!kind) return Status::Error(pointer + "/kind: unknown step kind");
    const bool extend = step.kind == "tokenizer" && step.spec.value("mode", std::string("train")) == "extend";
    if (step.kind == "tokenizer")
        resolved.engine_args = {"tokenizer", extend ? "extend" : "train"};
    else
        resolved.engine_args = {step.kind};
    for (const Field& f : kind->fields) {
        if (!step.spec.contains(f.key)) continue;
        const std::string where = pointer + "/" + f.key;
        const json& v = step.spec.at(f.key);
        std::string value;
        if (f.type == FieldType::kArgs) {
            for (size_t i = 0; i < v.size(); ++i) {
                Result<std::string> arg = substitute(v[i].get<std::string>(), lookup);
                if (!arg.ok()) return Status::Error(where + "/" + std::to_string(i) + ": " + arg.error());
                resolved.engine_args.push_back(*arg);
            }
            continue;
        }
        if (v.is_number_integer()) {
            value = std::to_string(v.get<int64_t>());
        } else {
            Result<std::string> s = substitute(v.get<std::string>(), lookup);
            if (!s.ok()) return Status::Error(where + ": " + s.error());
            value = *s;
        }
        if (f.type == FieldType::kPath && !value.empty() && value[0] != '/' && context.input) {
            Result<std::string> in = context.input(where, value);
            if (!in.ok()) return in.status();
            value = *in;
        }
        if (f.type == FieldType::kOut) {
            if (!value.empty() && value[0] != '/') value = context.run_dir + "/" + value;
            resolved.out = value;
        }
        if (f.type == FieldType::kChoice && f.key == std::string("type") && value == "bpe")
            continue;                                           // default
        if (f.type == FieldType::kChoice && !f.flag) continue;  // mode
        if (!f.flag) continue;
        resolved.engine_args.push_back(f.flag);
        resolved.engine_args.push_back(value);
    }
    if (step.kind == "eval") resolved.stdout_file = resolved.out;
    return resolved;
}

std::string describe_step_kinds() {
    std::ostringstream out;
    for (const Kind& k : kinds()) {
        out << k.name << ": " << k.help << "\n";
        for (const Field& f : k.fields) {
            out << "  " << f.key << (f.required ? " (required)" : "");
            if (!f.choices.empty()) {
                out << " one of";
                for (const std::string& c : f.choices)
                    out << " " << c;
            }
            out << ": " << f.help << "\n";
        }
        if (std::string(k.name) != "train")
            out << "  cpus, time: the Slurm job's CPUs (4) and time limit (01:00:00)\n";
    }
    out << "References in any string: ${vars.NAME}, ${steps.NAME.out} (earlier steps only), ${run}\n";
    return out.str();
}

}  // namespace slipway
