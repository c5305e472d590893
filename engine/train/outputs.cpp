// save_outputs (outputs.h).
#include "train/outputs.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "model/lora.h"
#include "model/weights.h"

namespace slipway::train {

Status save_outputs(model::LlamaForCausalLM& model, const RunConfig& config,
                    const std::string& engine_version, int64_t world_size) {
    namespace fs = std::filesystem;
    const std::string& dir = config.training.output_dir;
    // LoRA: a PEFT adapter folder. Otherwise an HF model; trained weights stay fp32 unless the base was
    // stored narrower.
    const Status saved =
        config.adapter.method == "lora"
            ? model::save_adapter(model, config.adapter, config.model.path, dir)
            : model::save_hf_model(model, dir,
                                   config.model.init == "random" ? "float32" : config.model.dtype);
    if (!saved.ok()) return saved;
    const std::string tokenizer =
        config.tokenizer.path.empty() ? config.model.path + "/tokenizer.json" : config.tokenizer.path;
    std::error_code ec;
    fs::copy_file(tokenizer, fs::path(dir) / "tokenizer.json", fs::copy_options::overwrite_existing, ec);
    if (ec) return Status::Error(dir + "/tokenizer.json: cannot copy " + tokenizer + ": " + ec.message());
    nlohmann::ordered_json run = {
        {"engine_version", engine_version}, {"world_size", world_size}, {"config", to_json(config)}};
    std::ofstream out(fs::path(dir) / "run.json");
    out << run.dump(2) << "\n";
    if (!out) return Status::Error(dir + "/run.json: write failed");
    return Status::Ok();
}

}  // namespace slipway::train
