// Fuzz harness: a model folder's config.json (HF LlamaConfig and friends), and what the engine derives
// from it before allocating anything: parameter count and RoPE frequencies.
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_common.h"
#include "model/llama_config.h"

using namespace slipway;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = fuzz::write_scratch("config.json", fuzz::as_text(data, size));
    Result<model::LlamaConfig> config = model::LlamaConfig::from_file(path);
    if (!config.ok()) {
        FUZZ_CHECK(fuzz::names(config.error(), path), config.error());
        return 0;
    }
    (void)config->parameter_count();
    (void)model::rope_inverse_frequencies(*config);
    (void)config->to_json().dump();
    return 0;
}
