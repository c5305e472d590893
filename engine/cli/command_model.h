// What the commands that run a model (score, dump, generate, eval) share: the device named by --device, the
// model folder with an optional PEFT adapter on it, and the {"ids": [...]} line format of token files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "contract/status.h"
#include "model/llama.h"

namespace slipway::engine {

// "cpu", or "cuda" (GPU 0) when this LibTorch sees a GPU; an error naming --device otherwise.
[[nodiscard]] Result<torch::Device> command_device(const std::string& name);

// The model folder (with `adapter_dir`'s LoRA adapter when given) on `device`.
[[nodiscard]] Result<model::LlamaForCausalLM> load_for_command(const std::string& model_dir,
                                                               const std::string& adapter_dir,
                                                               const torch::Device& device);

// One line of a token file, {"ids": [...]}: at least `min_ids` integers, each a token of the model's
// vocabulary. 1.5 or 1e300 are refused, not converted; errors start with `where` (file:line: ).
[[nodiscard]] Result<std::vector<int64_t>> read_ids_line(std::string_view line, const std::string& where,
                                                         int64_t vocab, size_t min_ids);

}  // namespace slipway::engine
