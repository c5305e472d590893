// `slipway-engine export gguf`: a model (with a LoRA adapter merged in) as one GGUF file that llama.cpp and
// Ollama load, with its tokenizer and chat template in the metadata.
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_export_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
