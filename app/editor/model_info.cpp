// Model shape from config.json, LoRA targets and the memory estimate.
#include "editor/model_info.h"

#include <algorithm>
#include <cmath>

namespace slipway::app {
namespace {

double gib(double bytes) {
    return bytes / (1024.0 * 1024.0 * 1024.0);
}

double dtype_bytes(const std::string& dtype) {
    return dtype == "float32" ? 4.0 : 2.0;
}

bool matches(const std::vector<std::string>& targets, const std::string& module) {
    return std::find(targets.begin(), targets.end(), module) != targets.end() ||
           std::find(targets.begin(), targets.end(), "all-linear") != targets.end();
}

}  // namespace

int64_t ModelShape::linear_parameters(const std::string& module) const {
    const int64_t head_dim = num_heads > 0 ? hidden_size / num_heads : 0;
    const int64_t kv = (num_kv_heads > 0 ? num_kv_heads : num_heads) * head_dim;
    if (module == "q_proj" || module == "o_proj") return hidden_size * hidden_size;
    if (module == "k_proj" || module == "v_proj") return hidden_size * kv;
    if (module == "gate_proj" || module == "up_proj" || module == "down_proj")
        return hidden_size * intermediate_size;
    return 0;
}

int64_t ModelShape::parameters() const {
    int64_t per_layer = 2 * hidden_size;  // two RMSNorms
    for (const std::string& m : linear_module_names(*this))
        per_layer += linear_parameters(m);
    const int64_t embeddings = vocab_size * hidden_size * (tied_embeddings ? 1 : 2);
    return embeddings + num_layers * per_layer + hidden_size;
}

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

MemoryEstimate estimate_memory(const RunConfig& config, const ModelShape& shape) {
    MemoryEstimate e;
    e.parameters = shape.parameters();
    const std::string& method = config.adapter.method;
    if (method == "full") {
        e.trainable_parameters = e.parameters;
    } else if (method == "embeddings") {
        e.trainable_parameters = shape.vocab_size * shape.hidden_size * (shape.tied_embeddings ? 1 : 2);
    } else {
        int64_t lora = 0;
        for (const std::string& m : linear_module_names(shape)) {
            if (!matches(config.adapter.target_modules, m)) continue;
            const int64_t in = m == "down_proj" ? shape.intermediate_size : shape.hidden_size;
            const int64_t out = shape.linear_parameters(m) / std::max<int64_t>(1, in);
            lora += config.adapter.r * (in + out);
        }
        e.trainable_parameters = lora * shape.num_layers;
        for (const std::string& m : config.adapter.modules_to_save) {
            if (m == "embed_tokens" || m == "lm_head")
                e.trainable_parameters += shape.vocab_size * shape.hidden_size;
        }
    }
    e.weights_gib = gib(static_cast<double>(e.parameters) * dtype_bytes(config.model.dtype));
    // fp32 master copy (when the weights are stored narrower) + fp32 gradient + two AdamW moments.
    const double per_trainable = (config.model.dtype == "float32" ? 0.0 : 4.0) + 4.0 + 8.0;
    e.optimizer_gib = gib(static_cast<double>(e.trainable_parameters) * per_trainable);
    // Activations of one micro-batch (Korthikanti et al.: ~34 bytes x s x b x h per layer in half
    // precision, plus attention scores 5 x a x s^2 x b), fp32 logits and their gradient.
    const double b = static_cast<double>(config.training.per_device_train_batch_size);
    const double s = static_cast<double>(config.data.block_size);
    const double h = static_cast<double>(shape.hidden_size);
    const double a = static_cast<double>(shape.num_heads);
    const double scale = (config.training.bf16 || config.model.dtype != "float32") ? 1.0 : 2.0;
    const double per_layer = scale * (34.0 * s * b * h + 5.0 * a * s * s * b);
    const double layers = static_cast<double>(shape.num_layers);
    const double act = config.training.gradient_checkpointing ? layers * 2.0 * s * b * h * scale + per_layer
                                                              : layers * per_layer;
    const double logits = 2.0 * 4.0 * b * s * static_cast<double>(shape.vocab_size);
    e.activations_gib = gib(act + logits);
    e.total_gib = e.weights_gib + e.optimizer_gib + e.activations_gib;
    return e;
}

}  // namespace slipway::app
