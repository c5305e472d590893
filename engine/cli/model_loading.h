// What the model commands (score, dump, eval, generate) share: the device named on the command line, an HF
// model folder loaded with an optional PEFT LoRA adapter and placed on that device, and the {"ids": [...]}
// line format of token files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <c10/core/Device.h>

#include "contract/status.h"
#include "model/llama.h"
#include "tokenizer/tokenizer.h"

namespace slipway::engine {

// "cpu", or "cuda" (GPU 0) when this LibTorch sees a GPU.
[[nodiscard]] Result<c10::Device> command_device(const std::string& name);

struct CommandModel {
    model::LlamaForCausalLM llama{nullptr};
    c10::Device device{c10::kCPU};
};

// The model folder (with `adapter_dir`'s LoRA adapter when given) on the device named `device_name`.
[[nodiscard]] Result<CommandModel> load_for_command(const std::string& model_dir,
                                                    const std::string& adapter_dir,
                                                    const std::string& device_name);

// The tokenizer.json that goes with a model: the adapter folder's when it has one, else the model folder's
// ("" when neither has one).
std::string model_tokenizer_path(const std::string& model_dir, const std::string& adapter_dir);

// The folder whose chat template goes with a model: the adapter folder's when it has one of its own
// (tokenizer_config.json or chat_template.jinja, as training writes them), else the model folder.
std::string model_chat_folder(const std::string& model_dir, const std::string& adapter_dir);

// The tokenizer a model command uses: `explicit_path` (--tokenizer) when given, else model_tokenizer_path's;
// an error saying to give --tokenizer when there is none.
[[nodiscard]] Result<tokenizer::Tokenizer> load_command_tokenizer(const std::string& model_dir,
                                                                  const std::string& adapter_dir,
                                                                  const std::string& explicit_path);

// --threads: LibTorch's intra-op threads, 0 meaning every core.
void set_command_threads(int threads);

// One line of a token file, {"ids": [...]}: at least `min_ids` integers, each a token of the model's
// vocabulary. 1.5 or 1e300 are refused, not converted; errors start with `where` (file:line: ).
[[nodiscard]] Result<std::vector<int64_t>> read_ids_line(std::string_view line, const std::string& where,
                                                         int64_t vocab, size_t min_ids);

}  // namespace slipway::engine
