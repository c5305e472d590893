// The run editor's model: the run config as a JSON document that the field widgets edit by JSON pointer,
// re-parsed and validated after every change (contract parse_run_config + validate), so each widget can
// show the problem at its pointer and Submit can be enabled only when there is none. No widgets here.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "contract/run_config.h"
#include "contract/status.h"

namespace slipway::app {

class RunDocument {
public:
    RunDocument();  // the defaults of every field
    explicit RunDocument(const RunConfig& config);
    // A run config file or a finished run's run.json; parse problems are kept (shown in the editor),
    // only an unreadable file or bad JSON fails.
    static Result<RunDocument> from_file(const std::string& path);

    // Relative model paths are read (for the model's max positions and modules) from this folder.
    void set_base_dir(std::string dir);

    const nlohmann::ordered_json& json() const { return doc_; }
    nlohmann::json value(const std::string& pointer) const;  // null when absent
    // Sets the field at `pointer` (a null value of a non-nullable field removes it: the default applies).
    void set_value(const std::string& pointer, const nlohmann::json& value);
    void set_config(const RunConfig& config);

    const RunConfig& config() const { return config_; }
    const ConfigProblems& problems() const { return problems_; }
    // The problems at `pointer` (or below it), one per line; "" when there is none.
    std::string problems_at(const std::string& pointer) const;
    bool valid() const { return !has_errors(problems_); }

    // Exactly what save() writes: the config with every field, in the schema's order, 2-space indent.
    std::string text() const;
    Status save(const std::string& path) const;

private:
    void check();

    nlohmann::ordered_json doc_;
    RunConfig config_;
    ConfigProblems problems_;
    std::string base_dir_;
};

}  // namespace slipway::app
