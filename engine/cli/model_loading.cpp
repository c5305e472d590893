// The model commands' shared loading (model_loading.h).
#include <torch/torch.h>

#include "cli/model_loading.h"

#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "contract/json_text.h"
#include "model/lora.h"
#include "model/qlora.h"
#include "model/torch_compat.h"
#include "model/weights.h"

namespace slipway::engine {

Result<c10::Device> command_device(const std::string& name) {
    if (name == "cpu") return c10::Device(torch::kCPU);
    if (!torch::cuda::is_available()) return Status::Error("--device cuda: this LibTorch sees no CUDA GPU");
    return c10::Device(torch::kCUDA, 0);
}

Result<CommandModel> load_for_command(const std::string& model_dir, const std::string& adapter_dir,
                                      const std::string& device_name) {
    Result<c10::Device> device = command_device(device_name);
    if (!device.ok()) return device.status();
    Result<model::LlamaForCausalLM> llama = model::load_hf_model(model_dir);
    if (!llama.ok()) return llama.status();
    if (!adapter_dir.empty()) {
        Result<AdapterConfig> adapter = model::load_adapter(*llama, adapter_dir);
        if (!adapter.ok()) return adapter.status();
    }
    if (!device->is_cpu()) {
        (*llama)->to(*device);
        model::move_quantized_base(*llama, *device);  // a -bnb-4bit folder's 4-bit layers
    }
    return CommandModel{*llama, *device};
}

Result<tokenizer::Tokenizer> load_command_tokenizer(const std::string& model_dir,
                                                    const std::string& adapter_dir,
                                                    const std::string& explicit_path) {
    const std::string path =
        explicit_path.empty() ? model_tokenizer_path(model_dir, adapter_dir) : explicit_path;
    if (path.empty()) {
        return Status::Error(model_dir + ": no tokenizer.json in the model" +
                             (adapter_dir.empty() ? "" : " or adapter") + " folder; give --tokenizer");
    }
    return tokenizer::Tokenizer::from_file(path);
}

void set_command_threads(int threads) {
    model::set_torch_threads(threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency()));
}

std::string model_tokenizer_path(const std::string& model_dir, const std::string& adapter_dir) {
    for (const std::string& dir : {adapter_dir, model_dir}) {
        std::error_code ec;
        if (!dir.empty() && std::filesystem::exists(dir + "/tokenizer.json", ec))
            return dir + "/tokenizer.json";
    }
    return "";
}

std::string model_chat_folder(const std::string& model_dir, const std::string& adapter_dir) {
    std::error_code ec;
    if (!adapter_dir.empty() && (std::filesystem::exists(adapter_dir + "/tokenizer_config.json", ec) ||
                                 std::filesystem::exists(adapter_dir + "/chat_template.jinja", ec)))
        return adapter_dir;
    return model_dir;
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
