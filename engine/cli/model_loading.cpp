// The model commands' shared loading (model_loading.h).
#include <torch/torch.h>

#include "cli/model_loading.h"

#include <filesystem>

#include "model/lora.h"
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
    if (!device->is_cpu()) (*llama)->to(*device);
    return CommandModel{*llama, *device};
}

std::string model_tokenizer_path(const std::string& model_dir, const std::string& adapter_dir) {
    for (const std::string& dir : {adapter_dir, model_dir}) {
        std::error_code ec;
        if (!dir.empty() && std::filesystem::exists(dir + "/tokenizer.json", ec))
            return dir + "/tokenizer.json";
    }
    return "";
}

}  // namespace slipway::engine
