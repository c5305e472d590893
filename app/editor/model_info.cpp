// Model shape from config.json and the LoRA target names.
#include "editor/model_info.h"

namespace slipway::app {

Result<ModelShape> read_model_shape(const std::string& model_dir) {
    const std::string path = model_dir + "/config.json";
    Result<nlohmann::json> j = read_json_file(path);
    if (!j.ok()) return j.status();
    ModelShape s;
    auto num = [&j](const char* key) -> int64_t {
        return j->contains(key) && (*j)[key].is_number_integer() ? (*j)[key].get<int64_t>() : 0;
    };
    s.model_type = j->value("model_type", std::string());
    s.vocab_size = num("vocab_size");
    s.hidden_size = num("hidden_size");
    s.intermediate_size = num("intermediate_size");
    s.num_layers = num("num_hidden_layers");
    s.num_heads = num("num_attention_heads");
    s.num_kv_heads = num("num_key_value_heads");
    if (s.num_kv_heads == 0) s.num_kv_heads = s.num_heads;
    s.tied_embeddings = j->value("tie_word_embeddings", false);
    if (s.hidden_size <= 0 || s.num_layers <= 0 || s.vocab_size <= 0) {
        return Result<ModelShape>::Error(path +
                                         ": not a LLaMA-family config (hidden_size, num_hidden_layers, "
                                         "vocab_size)");
    }
    return s;
}

std::vector<std::string> linear_module_names(const ModelShape&) {
    // Every family the engine loads (LLaMA, Mistral, Qwen2-style) names its projections the same way.
    return {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
}

}  // namespace slipway::app
