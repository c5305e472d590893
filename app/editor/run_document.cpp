// RunDocument: edit by pointer, re-check on every change.
#include "editor/run_document.h"

#include <filesystem>

#include "contract/run_config_schema.h"

namespace slipway::app {

RunDocument::RunDocument() : RunDocument(RunConfig()) {}

RunDocument::RunDocument(const RunConfig& config) {
    set_config(config);
}

Result<RunDocument> RunDocument::from_file(const std::string& path) {
    Result<nlohmann::json> doc = read_run_document(path);
    if (!doc.ok()) return doc.status();
    RunDocument out;
    out.doc_ = nlohmann::ordered_json(*doc);
    out.check();
    // Start from the complete form (every field shown) when the file parsed.
    if (out.valid() || !has_errors(parse_run_config(*doc).problems)) out.doc_ = to_json(out.config_);
    return out;
}

void RunDocument::set_base_dir(std::string dir) {
    base_dir_ = std::move(dir);
    check();
}

nlohmann::json RunDocument::value(const std::string& pointer) const {
    const nlohmann::json::json_pointer ptr(pointer);
    const nlohmann::json doc(doc_);
    return doc.contains(ptr) ? doc.at(ptr) : nlohmann::json();
}

void RunDocument::set_value(const std::string& pointer, const nlohmann::json& value) {
    nlohmann::json doc(doc_);
    const nlohmann::json::json_pointer ptr(pointer);
    const FieldSpec* spec = find_field(pointer);
    if (value.is_null() && spec != nullptr && !spec->nullable) {
        // An emptied field that cannot be null: drop it, so its default applies.
        if (doc.contains(ptr)) doc.at(ptr.parent_pointer()).erase(ptr.back());
    } else {
        doc[ptr] = value;
    }
    doc_ = nlohmann::ordered_json(doc);
    check();
    // Keep the schema's key order for the preview: rebuild from the typed config when it parsed cleanly.
    if (!has_errors(parse_run_config(nlohmann::json(doc_)).problems)) doc_ = to_json(config_);
}

void RunDocument::set_config(const RunConfig& config) {
    doc_ = to_json(config);
    check();
}

void RunDocument::check() {
    ParsedRunConfig parsed = parse_run_config(nlohmann::json(doc_));
    config_ = std::move(parsed.config);
    problems_ = std::move(parsed.problems);
    RunConfig resolved = config_;
    if (!base_dir_.empty() && !resolved.model.path.empty() &&
        std::filesystem::path(resolved.model.path).is_relative()) {
        resolved.model.path = (std::filesystem::path(base_dir_) / resolved.model.path).string();
    }
    for (ConfigProblem& p : validate(config_, validation_context_for(resolved)))
        problems_.push_back(std::move(p));
}

std::string RunDocument::problems_at(const std::string& pointer) const {
    std::string out;
    for (const ConfigProblem& p : problems_) {
        if (p.pointer == pointer || p.pointer.rfind(pointer + "/", 0) == 0) {
            if (!out.empty()) out += "\n";
            out += (p.is_error() ? "" : "warning: ") + p.message;
        }
    }
    return out;
}

std::string RunDocument::text() const {
    // What save_run_config writes for a config that parsed; the raw document otherwise (it cannot be saved).
    return (has_errors(parse_run_config(nlohmann::json(doc_)).problems) ? doc_ : to_json(config_)).dump(2) +
           "\n";
}

Status RunDocument::save(const std::string& path) const {
    if (!valid()) return Status::Error("the run config has errors:\n" + format_problems(problems_));
    return save_run_config(config_, path);
}

}  // namespace slipway::app
