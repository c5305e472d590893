// The task-file reader of tasks.h: the document's fields, then each task's JSONL samples.
#include "eval/tasks.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "contract/json_text.h"
#include "contract/run_config_schema.h"

namespace slipway::eval {
namespace {

using json = nlohmann::json;

const char* kind_list = "multiple_choice | generation | perplexity";

std::optional<TaskKind> kind_from_name(const std::string& name) {
    if (name == "multiple_choice") return TaskKind::kMultipleChoice;
    if (name == "generation") return TaskKind::kGeneration;
    if (name == "perplexity") return TaskKind::kPerplexity;
    return std::nullopt;
}

// The fields a task may have beside name, kind, data and limit, per kind.
std::vector<std::string> kind_options(TaskKind kind) {
    switch (kind) {
        case TaskKind::kMultipleChoice:
            return {"target_delimiter"};
        case TaskKind::kGeneration:
            return {"max_new_tokens", "stop", "strip"};
        case TaskKind::kPerplexity:
            return {};
    }
    return {};
}

// Errors about one task: "tasks.json: tasks[1] \"copy\": field \"stop\": must be ...".
class TaskErrors {
public:
    TaskErrors(const std::string& path, size_t index, const std::string& name)
        : prefix_(path + ": tasks[" + std::to_string(index) + "]" +
                  (name.empty() ? "" : " \"" + name + "\"") + ": ") {}
    Status field(const std::string& key, const std::string& what) const {
        return Status::Error(prefix_ + "field \"" + key + "\": " + what);
    }
    Status error(const std::string& what) const { return Status::Error(prefix_ + what); }

private:
    std::string prefix_;
};

bool is_integer(const json& v) {
    return v.is_number_integer() || v.is_number_unsigned();
}

Result<std::string> string_field(const json& line, const char* key, const std::string& where,
                                 bool allow_empty) {
    const auto found = line.find(key);
    if (found == line.end()) return Result<std::string>::Error(where + "missing field \"" + key + "\"");
    if (!found->is_string())
        return Result<std::string>::Error(where + "field \"" + key + "\": must be a string, got " +
                                          short_json(*found));
    std::string value = found->get<std::string>();
    if (!allow_empty && value.empty())
        return Result<std::string>::Error(where + "field \"" + key + "\": must not be empty");
    return value;
}

// One JSONL line of `task`; `where` is "FILE:LINE: task \"NAME\": ".
Status read_sample(const json& line, size_t number, const std::string& where, EvalTask& task) {
    if (!line.is_object()) return Status::Error(where + "expected a JSON object, got " + short_json(line));
    switch (task.kind) {
        case TaskKind::kMultipleChoice: {
            ChoiceSample s;
            s.line = number;
            Result<std::string> context = string_field(line, "context", where, false);
            if (!context.ok()) return context.status();
            s.context = std::move(*context);
            const auto choices = line.find("choices");
            if (choices == line.end()) return Status::Error(where + "missing field \"choices\"");
            if (!choices->is_array() || choices->size() < 2)
                return Status::Error(where + "field \"choices\": must be a list of at least 2 strings, got " +
                                     short_json(*choices));
            for (size_t i = 0; i < choices->size(); ++i) {
                const json& c = (*choices)[i];
                if (!c.is_string() || c.get<std::string>().empty())
                    return Status::Error(where + "field \"choices\"[" + std::to_string(i) +
                                         "]: must be a non-empty string, got " + short_json(c));
                s.choices.push_back(c.get<std::string>());
            }
            const auto gold = line.find("gold");
            if (gold == line.end()) return Status::Error(where + "missing field \"gold\"");
            const bool in_range = is_integer(*gold) &&
                                  !(gold->is_number_integer() && gold->get<int64_t>() < 0) &&
                                  gold->get<uint64_t>() < s.choices.size();
            if (!in_range)
                return Status::Error(where + "field \"gold\": must be the index of the right choice (0 to " +
                                     std::to_string(s.choices.size() - 1) + "), got " + short_json(*gold));
            s.gold = gold->get<int64_t>();
            task.choice_samples.push_back(std::move(s));
            return Status::Ok();
        }
        case TaskKind::kGeneration: {
            GenerationSample s;
            s.line = number;
            Result<std::string> prompt = string_field(line, "prompt", where, false);
            if (!prompt.ok()) return prompt.status();
            Result<std::string> target = string_field(line, "target", where, false);
            if (!target.ok()) return target.status();
            s.prompt = std::move(*prompt);
            s.target = std::move(*target);
            task.generation_samples.push_back(std::move(s));
            return Status::Ok();
        }
        case TaskKind::kPerplexity: {
            Result<std::string> text = string_field(line, "text", where, false);
            if (!text.ok()) return text.status();
            task.text_samples.push_back({number, std::move(*text)});
            return Status::Ok();
        }
    }
    return Status::Ok();
}

Status read_samples(EvalTask& task, std::optional<int64_t> limit) {
    std::error_code ec;
    if (std::filesystem::exists(task.data_path, ec) && !std::filesystem::is_regular_file(task.data_path, ec))
        return Status::Error(task.data_path + ": the data file of task \"" + task.name +
                             "\" is not a regular file");
    std::ifstream in(task.data_path, std::ios::binary);
    if (!in)
        return Status::Error(task.data_path + ": cannot open the data file of task \"" + task.name + "\"");
    std::string line;
    size_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (limit && static_cast<int64_t>(task.sample_count()) >= *limit) break;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines are skipped
        const std::string where =
            task.data_path + ":" + std::to_string(number) + ": task \"" + task.name + "\": ";
        Result<json> doc = parse_json_text(line, task.data_path + ":" + std::to_string(number));
        if (!doc.ok()) return Status::Error(doc.error() + " (task \"" + task.name + "\")");
        if (Status s = read_sample(*doc, number, where, task); !s.ok()) return s;
    }
    if (in.bad()) return Status::Error(task.data_path + ": read error");
    if (task.sample_count() == 0)
        return Status::Error(task.data_path + ": task \"" + task.name + "\" has no samples");
    return Status::Ok();
}

Status read_task(const json& entry, size_t index, const std::string& path, const std::filesystem::path& base,
                 std::set<std::string>& names, EvalTask& task) {
    const std::string name = entry.is_object() && entry.contains("name") && entry["name"].is_string()
                                 ? entry["name"].get<std::string>()
                                 : "";
    const TaskErrors errors(path, index, name);
    if (!entry.is_object()) return errors.error("must be an object {\"name\", \"kind\", \"data\", ...}");
    if (!entry.contains("name")) return errors.field("name", "missing");
    if (name.empty())
        return errors.field("name", "must be a non-empty string, got " + short_json(entry["name"]));
    if (!names.insert(name).second) return errors.field("name", "another task already has this name");
    task.name = name;
    if (!entry.contains("kind")) return errors.field("kind", std::string("missing (") + kind_list + ")");
    const json& kind = entry["kind"];
    const std::optional<TaskKind> parsed =
        kind.is_string() ? kind_from_name(kind.get<std::string>()) : std::nullopt;
    if (!parsed)
        return errors.field("kind", std::string("must be ") + kind_list + ", got " + short_json(kind));
    task.kind = *parsed;
    if (!entry.contains("data"))
        return errors.field("data", "missing (a JSONL file, relative to the task file)");
    if (!entry["data"].is_string() || entry["data"].get<std::string>().empty())
        return errors.field("data", "must be a file name, got " + short_json(entry["data"]));
    const std::filesystem::path data = entry["data"].get<std::string>();
    task.data_path = data.is_absolute() ? data.string() : (base / data).lexically_normal().string();

    std::vector<std::string> known = {"name", "kind", "data", "limit", "add_bos_token"};
    for (const std::string& option : kind_options(task.kind))
        known.push_back(option);
    for (const auto& [key, value] : entry.items()) {
        if (std::find(known.begin(), known.end(), key) != known.end()) continue;
        std::string hint = closest_match(key, known);
        return errors.field(key, std::string("unknown for a ") + task_kind_name(task.kind) + " task" +
                                     (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
    }
    if (entry.contains("limit")) {
        const json& v = entry["limit"];
        if (!v.is_null()) {
            if (!is_integer(v) || (v.is_number_integer() && v.get<int64_t>() < 1))
                return errors.field("limit", "must be an integer >= 1 or null, got " + short_json(v));
            task.limit = v.get<int64_t>();
        }
    }
    if (entry.contains("add_bos_token")) {
        const json& v = entry["add_bos_token"];
        if (!v.is_boolean() && !v.is_null())
            return errors.field("add_bos_token",
                                "must be true, false or null (the tokenizer decides), got " + short_json(v));
        if (v.is_boolean()) task.add_bos_token = v.get<bool>();
    }
    if (entry.contains("target_delimiter")) {
        if (!entry["target_delimiter"].is_string())
            return errors.field("target_delimiter",
                                "must be a string, got " + short_json(entry["target_delimiter"]));
        task.target_delimiter = entry["target_delimiter"].get<std::string>();
    }
    if (entry.contains("max_new_tokens")) {
        const json& v = entry["max_new_tokens"];
        if (!is_integer(v) || (v.is_number_integer() && v.get<int64_t>() < 1) ||
            (v.is_number_unsigned() && v.get<uint64_t>() > 1000000))
            return errors.field("max_new_tokens",
                                "must be an integer from 1 to 1000000, got " + short_json(v));
        task.max_new_tokens = v.get<int64_t>();
    }
    if (entry.contains("stop")) {
        const json& v = entry["stop"];
        if (!v.is_array()) return errors.field("stop", "must be a list of strings, got " + short_json(v));
        for (size_t i = 0; i < v.size(); ++i) {
            if (!v[i].is_string() || v[i].get<std::string>().empty())
                return errors.field("stop", "entry " + std::to_string(i) +
                                                " must be a non-empty string, got " + short_json(v[i]));
            task.stop.push_back(v[i].get<std::string>());
        }
    }
    if (entry.contains("strip")) {
        if (!entry["strip"].is_boolean())
            return errors.field("strip", "must be true or false, got " + short_json(entry["strip"]));
        task.strip = entry["strip"].get<bool>();
    }
    return Status::Ok();
}

}  // namespace

const char* task_kind_name(TaskKind kind) {
    switch (kind) {
        case TaskKind::kMultipleChoice:
            return "multiple_choice";
        case TaskKind::kGeneration:
            return "generation";
        case TaskKind::kPerplexity:
            return "perplexity";
    }
    return "?";
}

size_t EvalTask::sample_count() const {
    return choice_samples.size() + generation_samples.size() + text_samples.size();
}

Result<std::vector<EvalTask>> parse_eval_tasks(const std::string& text, const std::string& path,
                                               std::optional<int64_t> limit) {
    using R = Result<std::vector<EvalTask>>;
    Result<json> doc = parse_json_text(text, path);
    if (!doc.ok()) return doc.status();
    if (!doc->is_object()) return R::Error(path + ": expected an object {\"schema\": ..., \"tasks\": [...]}");
    for (const auto& [key, value] : doc->items()) {
        if (key != "schema" && key != "tasks" && key != "comment") {
            std::string hint = closest_match(key, {"schema", "tasks", "comment"});
            return R::Error(path + ": field \"" + key + "\": unknown" +
                            (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
        }
    }
    if (doc->contains("schema") && (*doc)["schema"] != kEvalTasksSchema)
        return R::Error(path + ": field \"schema\": must be \"" + kEvalTasksSchema + "\", got " +
                        short_json((*doc)["schema"]));
    if (doc->contains("comment") && !(*doc)["comment"].is_string())
        return R::Error(path + ": field \"comment\": must be a string");
    const auto tasks = doc->find("tasks");
    if (tasks == doc->end() || !tasks->is_array() || tasks->empty())
        return R::Error(path + ": field \"tasks\": must be a non-empty list of tasks");
    const std::filesystem::path base = std::filesystem::path(path).parent_path();
    std::set<std::string> names;
    std::vector<EvalTask> out;
    for (size_t i = 0; i < tasks->size(); ++i) {
        EvalTask task;
        if (Status s = read_task((*tasks)[i], i, path, base, names, task); !s.ok()) return s;
        std::optional<int64_t> cap = task.limit;
        if (limit && (!cap || *limit < *cap)) cap = limit;
        if (Status s = read_samples(task, cap); !s.ok()) return s;
        out.push_back(std::move(task));
    }
    return out;
}

Result<std::vector<EvalTask>> load_eval_tasks(const std::string& path, std::optional<int64_t> limit) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Result<std::vector<EvalTask>>::Error(path + ": cannot open the task file");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_eval_tasks(text.str(), path, limit);
}

}  // namespace slipway::eval
