// config.json parsing of llama_config.h, including the rope_scaling / rope_parameters forms, and the
// llama3 frequency rescaling.
#include "model/llama_config.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include <nlohmann/json.hpp>

#include "contract/run_config.h"

namespace slipway::model {
namespace {

std::vector<int64_t> ids_of(const nlohmann::json& v) {
    if (v.is_number_integer()) return {v.get<int64_t>()};
    std::vector<int64_t> out;
    if (v.is_array()) {
        for (const auto& e : v) {
            if (e.is_number_integer()) out.push_back(e.get<int64_t>());
        }
    }
    return out;
}

// An integer field; absent or null gives `fallback`. A float such as 3e48 is refused, not converted (the
// conversion is undefined past int64: found by fuzz_llama_config), and so is an integer past int64.
Result<int64_t> int_field(const nlohmann::json& object, const char* key, int64_t fallback) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return fallback;
    if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{INT64_MAX})) {
        return Status::Error(std::string("config.json: ") + key + " must be an integer, got " + it->dump());
    }
    return it->get<int64_t>();
}

const ModelFamily* family_of(const std::string& model_type) {
    for (const ModelFamily& family : kModelFamilies) {
        if (model_type == family.model_type) return &family;
    }
    return nullptr;
}

Result<bool> bool_field(const nlohmann::json& object, const char* key, bool fallback) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return fallback;
    if (!it->is_boolean())
        return Status::Error(std::string("config.json: ") + key + " must be true or false");
    return it->get<bool>();
}

// What each family's modeling_*.py builds from config.json (transformers 4.5x): biases, q/k norms, windows.
Status read_family_switches(const nlohmann::json& j, LlamaConfig& c) {
    Result<bool> attention_bias = bool_field(j, "attention_bias", false);
    Result<bool> mlp_bias = bool_field(j, "mlp_bias", false);
    Result<bool> use_sliding_window = bool_field(j, "use_sliding_window", false);
    for (const Result<bool>* r : {&attention_bias, &mlp_bias, &use_sliding_window}) {
        if (!r->ok()) return r->status();
    }
    if (c.model_type == "llama") {  // LlamaAttention: bias on q, k, v and o; LlamaMLP: on gate, up, down
        c.qkv_bias = c.o_bias = *attention_bias;
        c.mlp_bias = *mlp_bias;
    } else if (c.model_type == "mistral") {  // no biases; sliding_window defaults to 4096 (MistralConfig)
        Result<int64_t> window = int_field(j, "sliding_window", 4096);
        if (!window.ok()) return window.status();
        if (j.contains("sliding_window") && j["sliding_window"].is_null()) *window = 0;
        if (*window < 0) return Status::Error("config.json: sliding_window must not be negative");
        c.sliding_window = *window;
    } else {  // Qwen2Attention: bias on q, k, v only; Qwen3Attention: attention_bias on all four, q/k norm
        c.qkv_bias = c.model_type == "qwen2" || *attention_bias;
        c.o_bias = c.model_type == "qwen3" && *attention_bias;
        c.qk_norm = c.model_type == "qwen3";
        // Qwen's window covers only the layers from max_window_layers on; no released checkpoint uses it.
        if (*use_sliding_window) {
            return Status::Error("config.json: use_sliding_window true is not supported for " + c.model_type);
        }
    }
    return Status::Ok();
}

struct SizeLimit {
    const char* key;
    int64_t value;
    int64_t max;
};

Status check_size(const SizeLimit& size) {
    if (size.value >= 1 && size.value <= size.max) return Status::Ok();
    return Status::Error(std::string("config.json: ") + size.key + " (" + std::to_string(size.value) +
                         ") must be from 1 to " + std::to_string(size.max));
}

}  // namespace

Result<LlamaConfig> LlamaConfig::from_json(const nlohmann::json& j) {
    LlamaConfig c;
    try {
        if (!j.is_object()) return Status::Error("config.json: must be a JSON object");
        c.model_type = j.value("model_type", "llama");
        if (family_of(c.model_type) == nullptr) {
            std::string known;
            for (const ModelFamily& f : kModelFamilies)
                known += std::string(known.empty() ? "" : ", ") + f.model_type;
            return Status::Error("config.json: model_type \"" + c.model_type + "\" is not supported (" +
                                 known + ")");
        }
        auto get_double = [&j](const char* key, double fallback) {
            return j.contains(key) && !j[key].is_null() ? j[key].get<double>() : fallback;
        };
        const std::pair<const char*, int64_t*> ints[] = {
            {"vocab_size", &c.vocab_size},
            {"hidden_size", &c.hidden_size},
            {"intermediate_size", &c.intermediate_size},
            {"num_hidden_layers", &c.num_hidden_layers},
            {"num_attention_heads", &c.num_attention_heads},
            {"max_position_embeddings", &c.max_position_embeddings},
        };
        for (const auto& [key, field] : ints) {
            Result<int64_t> value = int_field(j, key, *field);
            if (!value.ok()) return value.status();
            *field = *value;
        }
        Result<int64_t> kv_heads = int_field(j, "num_key_value_heads", c.num_attention_heads);
        if (!kv_heads.ok()) return kv_heads.status();
        c.num_key_value_heads = *kv_heads;
        c.rms_norm_eps = get_double("rms_norm_eps", c.rms_norm_eps);
        c.initializer_range = get_double("initializer_range", c.initializer_range);
        c.tie_word_embeddings = j.value("tie_word_embeddings", false);
        // transformers 4.56+ writes "dtype", earlier versions "torch_dtype".
        const char* dtype_key = j.contains("dtype") ? "dtype" : "torch_dtype";
        c.torch_dtype =
            j.contains(dtype_key) && j[dtype_key].is_string() ? j[dtype_key].get<std::string>() : "float32";
        const SizeLimit sizes[] = {
            {"vocab_size", c.vocab_size, kMaxVocabSize},
            {"hidden_size", c.hidden_size, kMaxHiddenSize},
            {"intermediate_size", c.intermediate_size, kMaxIntermediateSize},
            {"num_hidden_layers", c.num_hidden_layers, kMaxHiddenLayers},
            {"num_attention_heads", c.num_attention_heads, kMaxAttentionHeads},
            {"num_key_value_heads", c.num_key_value_heads, kMaxAttentionHeads},
            {"max_position_embeddings", c.max_position_embeddings, kMaxPositionEmbeddings},
        };
        for (const SizeLimit& size : sizes) {
            if (Status s = check_size(size); !s.ok()) return s;
        }
        if (j.contains("head_dim") && !j["head_dim"].is_null()) {
            Result<int64_t> head_dim = int_field(j, "head_dim", 0);
            if (!head_dim.ok()) return head_dim.status();
            c.head_dim = *head_dim;
            if (Status s = check_size({"head_dim", c.head_dim, kMaxHeadDim}); !s.ok()) return s;
        } else {
            if (c.hidden_size % c.num_attention_heads != 0) {
                return Status::Error("config.json: num_attention_heads (" +
                                     std::to_string(c.num_attention_heads) + ") must divide hidden_size (" +
                                     std::to_string(c.hidden_size) + ")");
            }
            c.head_dim = c.hidden_size / c.num_attention_heads;
        }
        if (c.head_dim % 2 != 0) return Status::Error("config.json: head_dim must be even for RoPE");
        if (c.num_attention_heads % c.num_key_value_heads != 0) {
            return Status::Error(
                "config.json: num_key_value_heads (" + std::to_string(c.num_key_value_heads) +
                ") must divide num_attention_heads (" + std::to_string(c.num_attention_heads) + ")");
        }
        if (Status s = read_family_switches(j, c); !s.ok()) return s;
        // rope_theta at the top level, or the newer rope_parameters object.
        c.rope_theta = get_double("rope_theta", c.rope_theta);
        nlohmann::json scaling = j.value("rope_scaling", nlohmann::json());
        if (j.contains("rope_parameters") && j["rope_parameters"].is_object()) {
            scaling = j["rope_parameters"];
            if (scaling.contains("rope_theta")) c.rope_theta = scaling["rope_theta"].get<double>();
        }
        if (scaling.is_object()) {
            const std::string type = scaling.contains("rope_type")
                                         ? scaling["rope_type"].get<std::string>()
                                         : scaling.value("type", std::string("default"));
            if (type != "default" && type != "linear" && type != "llama3") {
                return Status::Error("config.json: rope_scaling type \"" + type +
                                     "\" is not supported (default, linear, llama3)");
            }
            c.rope_scaling.type = type;
            c.rope_scaling.factor = scaling.value("factor", 1.0);
            c.rope_scaling.low_freq_factor = scaling.value("low_freq_factor", 1.0);
            c.rope_scaling.high_freq_factor = scaling.value("high_freq_factor", 4.0);
            Result<int64_t> original = int_field(scaling, "original_max_position_embeddings", int64_t{8192});
            if (!original.ok()) return original.status();
            c.rope_scaling.original_max_position_embeddings = *original;
        }
        c.bos_token_ids = ids_of(j.value("bos_token_id", nlohmann::json()));
        c.eos_token_ids = ids_of(j.value("eos_token_id", nlohmann::json()));
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(std::string("config.json: ") + e.what());
    }
    return c;
}

Result<LlamaConfig> LlamaConfig::from_file(const std::string& path) {
    Result<nlohmann::json> json = read_json_file(path);
    if (!json.ok()) return json.status();
    Result<LlamaConfig> config = from_json(*json);
    if (!config.ok()) return Status::Error(path + ": " + config.error());
    return config;
}

nlohmann::json LlamaConfig::to_json() const {
    const ModelFamily* family = family_of(model_type);
    nlohmann::json j = {
        {"architectures", {family != nullptr ? family->architecture : "LlamaForCausalLM"}},
        {"model_type", model_type},
        {"vocab_size", vocab_size},
        {"hidden_size", hidden_size},
        {"intermediate_size", intermediate_size},
        {"num_hidden_layers", num_hidden_layers},
        {"num_attention_heads", num_attention_heads},
        {"num_key_value_heads", num_key_value_heads},
        {"head_dim", head_dim},
        {"max_position_embeddings", max_position_embeddings},
        {"rms_norm_eps", rms_norm_eps},
        {"rope_theta", rope_theta},
        {"hidden_act", "silu"},
        {"tie_word_embeddings", tie_word_embeddings},
        {"initializer_range", initializer_range},
        {"torch_dtype", torch_dtype},
    };
    if (model_type == "llama") {
        j["attention_bias"] = qkv_bias;
        j["mlp_bias"] = mlp_bias;
    } else if (model_type == "mistral") {
        j["sliding_window"] = sliding_window > 0 ? nlohmann::json(sliding_window) : nlohmann::json();
    } else {
        if (model_type == "qwen3") j["attention_bias"] = qkv_bias;
        j["use_sliding_window"] = false;
    }
    if (rope_scaling.type == "default") {
        j["rope_scaling"] = nullptr;
    } else {
        j["rope_scaling"] = {{"rope_type", rope_scaling.type}, {"factor", rope_scaling.factor}};
        if (rope_scaling.type == "llama3") {
            j["rope_scaling"]["low_freq_factor"] = rope_scaling.low_freq_factor;
            j["rope_scaling"]["high_freq_factor"] = rope_scaling.high_freq_factor;
            j["rope_scaling"]["original_max_position_embeddings"] =
                rope_scaling.original_max_position_embeddings;
        }
    }
    if (bos_token_ids.size() == 1) j["bos_token_id"] = bos_token_ids[0];
    if (eos_token_ids.size() == 1) j["eos_token_id"] = eos_token_ids[0];
    if (eos_token_ids.size() > 1) j["eos_token_id"] = eos_token_ids;
    return j;
}

int64_t LlamaConfig::parameter_count() const {
    const int64_t q = num_attention_heads * head_dim, kv = num_key_value_heads * head_dim;
    const int64_t attention = hidden_size * (2 * q + 2 * kv) + (qkv_bias ? q + 2 * kv : 0) +
                              (o_bias ? hidden_size : 0) + (qk_norm ? 2 * head_dim : 0);
    const int64_t mlp =
        3 * hidden_size * intermediate_size + (mlp_bias ? 2 * intermediate_size + hidden_size : 0);
    const int64_t layer = attention + mlp + 2 * hidden_size;
    const int64_t embeddings = vocab_size * hidden_size * (tie_word_embeddings ? 1 : 2);
    return embeddings + num_hidden_layers * layer + hidden_size;
}

std::vector<double> rope_inverse_frequencies(const LlamaConfig& c) {
    const int64_t half = c.head_dim / 2;
    std::vector<double> inv(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i) {
        inv[static_cast<size_t>(i)] =
            1.0 / std::pow(c.rope_theta, static_cast<double>(2 * i) / static_cast<double>(c.head_dim));
    }
    const RopeScaling& s = c.rope_scaling;
    if (s.type == "linear") {
        for (double& f : inv)
            f /= s.factor;
    } else if (s.type == "llama3") {
        // HF _compute_llama3_parameters: keep high frequencies, divide low ones by factor, blend between.
        const double pi = 3.14159265358979323846;
        const double old_context = static_cast<double>(s.original_max_position_embeddings);
        const double low_freq_wavelen = old_context / s.low_freq_factor;
        const double high_freq_wavelen = old_context / s.high_freq_factor;
        for (double& f : inv) {
            const double wavelen = 2 * pi / f;
            if (wavelen > low_freq_wavelen) {
                f = f / s.factor;
            } else if (wavelen >= high_freq_wavelen) {
                const double smooth =
                    (old_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
                f = (1 - smooth) * f / s.factor + smooth * f;
            }
        }
    }
    return inv;
}

}  // namespace slipway::model
