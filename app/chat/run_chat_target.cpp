// chat_target_of_run (see run_chat_target.h).
#include "chat/run_chat_target.h"

#include <nlohmann/json.hpp>

namespace slipway::app {

Result<RunConfig> stored_run_config(const StoredRun& run) {
    const nlohmann::json document =
        nlohmann::json::parse(run.config_json, nullptr, /*allow_exceptions=*/false);
    if (!document.is_object()) return Status::Error("run \"" + run.name + "\" has no stored run config");
    return parse_run_config(document).config;
}

Result<ChatTarget> chat_target_of_run(const StoredRun& run) {
    const Result<RunConfig> stored = stored_run_config(run);
    if (!stored.ok()) return stored.status();
    const RunConfig& config = *stored;
    ChatTarget target;
    target.label = QString::fromStdString(run.name);
    const QString output = QString::fromStdString(config.training.output_dir);
    if (config.adapter.method == "lora") {
        target.model_dir = QString::fromStdString(config.model.path);
        target.adapter_dir = output;
    } else {
        target.model_dir = output;
    }
    target.tokenizer = QString::fromStdString(config.tokenizer.path);
    return target;
}

}  // namespace slipway::app
