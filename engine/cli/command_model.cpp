// command_model.h: device, model + adapter loading and token lines for the model commands.
#include "cli/command_model.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "contract/json_text.h"
#include "contract/run_config.h"
#include "model/lora.h"
#include "model/weights.h"

namespace slipway::engine {

Result<torch::Device> command_device(const std::string& name) {
    if (name == "cpu") return torch::Device(torch::kCPU);
    if (!torch::cuda::is_available()) return Status::Error("--device cuda: this LibTorch sees no CUDA GPU");
    return torch::Device(torch::kCUDA, 0);
}

Result<model::LlamaForCausalLM> load_for_command(const std::string& model_dir, const std::string& adapter_dir,
                                                 const torch::Device& device) {
    Result<model::LlamaForCausalLM> llama = model::load_hf_model(model_dir);
    if (!llama.ok()) return llama.status();
    if (!adapter_dir.empty()) {
        Result<AdapterConfig> adapter = model::load_adapter(*llama, adapter_dir);
        if (!adapter.ok()) return adapter.status();
    }
    if (!device.is_cpu()) (*llama)->to(device);
    return llama;
}

Result<std::vector<int64_t>> read_ids_line(std::string_view line, const std::string& where, int64_t vocab,
                                           size_t min_ids) {
    Result<nlohmann::json> doc = parse_json_text(line, where.substr(0, where.size() - 2));
    if (!doc.ok()) return doc.status();
    const auto found = doc->is_object() ? doc->find("ids") : doc->end();
    if (!doc->is_object() || found == doc->end() || !found->is_array())
        return Result<std::vector<int64_t>>::Error(where + "expected {\"ids\": [...]}");
    if (found->size() < min_ids) {
        return Result<std::vector<int64_t>>::Error(where + "needs at least " + std::to_string(min_ids) +
                                                   " ids, got " + std::to_string(found->size()));
    }
    std::vector<int64_t> ids;
    ids.reserve(found->size());
    for (const nlohmann::json& v : *found) {
        const bool in_vocab = v.is_number_unsigned()  ? v.get<uint64_t>() < static_cast<uint64_t>(vocab)
                              : v.is_number_integer() ? v.get<int64_t>() >= 0 && v.get<int64_t>() < vocab
                                                      : false;
        if (!in_vocab) {
            return Result<std::vector<int64_t>>::Error(where + "id " + v.dump() +
                                                       " is not a token of the vocabulary (integers 0 to " +
                                                       std::to_string(vocab - 1) + ")");
        }
        ids.push_back(v.get<int64_t>());
    }
    return ids;
}

}  // namespace slipway::engine
