// What the model commands (score, dump, eval) share: the device named on the command line, and an HF model
// folder loaded with an optional PEFT LoRA adapter and placed on that device.
#pragma once

#include <string>

#include <c10/core/Device.h>

#include "contract/status.h"
#include "model/llama.h"

namespace slipway::engine {

// "cpu", or "cuda" (GPU 0) when this LibTorch sees a GPU.
Result<c10::Device> command_device(const std::string& name);

struct CommandModel {
    model::LlamaForCausalLM llama{nullptr};
    c10::Device device{c10::kCPU};
};

// The model folder (with `adapter_dir`'s LoRA adapter when given) on the device named `device_name`.
Result<CommandModel> load_for_command(const std::string& model_dir, const std::string& adapter_dir,
                                      const std::string& device_name);

// The tokenizer.json that goes with a model: the adapter folder's when it has one, else the model folder's
// ("" when neither has one).
std::string model_tokenizer_path(const std::string& model_dir, const std::string& adapter_dir);

}  // namespace slipway::engine
