// nf4_io.h: the bitsandbytes 4-bit keys and quantization_config (transformers' Bnb4BitHfQuantizer and
// bitsandbytes' QuantState.as_dict(packed=True) / from_dict).
#include "model/nf4_io.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "model/tensor_io.h"
#include "quant/nf4.h"

namespace slipway::model {
namespace {

const char* kQuantStateSuffix = ".quant_state.bitsandbytes__nf4";

std::string dtype_text(torch::ScalarType t) {
    return t == torch::kBFloat16 ? "bfloat16" : t == torch::kFloat16 ? "float16" : "float32";
}

Result<torch::Tensor> read(const io::Checkpoint& checkpoint, const std::string& key) {
    const auto it = checkpoint.tensors().find(key);
    if (it == checkpoint.tensors().end()) return Status::Error("missing 4-bit tensor \"" + key + "\"");
    Result<torch::Tensor> t = tensor_of(it->second);
    if (!t.ok()) return Status::Error("\"" + key + "\": " + t.error());
    return t->clone();  // out of the mapping
}

}  // namespace

Result<std::optional<Bnb4bitConfig>> read_bnb_4bit_config(const nlohmann::json& j) {
    if (!j.is_object() || !j.contains("quantization_config") || j["quantization_config"].is_null())
        return std::optional<Bnb4bitConfig>();
    const nlohmann::json& q = j["quantization_config"];
    auto error = [](const std::string& what) {
        return Result<std::optional<Bnb4bitConfig>>::Error("config.json: quantization_config: " + what);
    };
    if (!q.is_object()) return error("must be an object");
    if (q.value("quant_method", "") != "bitsandbytes")
        return error("quant_method \"" + q.value("quant_method", std::string()) +
                     "\" is not supported (bitsandbytes 4-bit nf4 only)");
    if (!q.value("load_in_4bit", false)) return error("load_in_4bit must be true (8-bit is not supported)");
    if (q.value("bnb_4bit_quant_type", "fp4") != "nf4")
        return error("bnb_4bit_quant_type must be nf4 (fp4 is not supported)");
    if (q.value("bnb_4bit_quant_storage", "uint8") != "uint8")
        return error("bnb_4bit_quant_storage must be uint8");
    Bnb4bitConfig c;
    c.double_quant = q.value("bnb_4bit_use_double_quant", false);
    c.compute_dtype = q.value("bnb_4bit_compute_dtype", "float32");
    if (c.compute_dtype != "bfloat16" && c.compute_dtype != "float16" && c.compute_dtype != "float32")
        return error("bnb_4bit_compute_dtype \"" + c.compute_dtype + "\" is not supported");
    return std::optional<Bnb4bitConfig>(c);
}

nlohmann::json bnb_4bit_config_json(const Bnb4bitConfig& c) {
    return {{"quant_method", "bitsandbytes"},
            {"load_in_4bit", true},
            {"load_in_8bit", false},
            {"bnb_4bit_quant_type", "nf4"},
            {"bnb_4bit_use_double_quant", c.double_quant},
            {"bnb_4bit_compute_dtype", c.compute_dtype},
            {"bnb_4bit_quant_storage", "uint8"},
            {"llm_int8_skip_modules", nullptr}};
}

const std::vector<std::string>& nf4_key_suffixes() {
    static const std::vector<std::string> suffixes = {".absmax", ".quant_map", ".nested_absmax",
                                                      ".nested_quant_map", kQuantStateSuffix};
    return suffixes;
}

void add_nf4_tensors(std::map<std::string, torch::Tensor>& out, const std::string& name, const Nf4Weight& w) {
    out[name] = w.packed.cpu().view({-1, 1});  // bitsandbytes' Params4bit: (n/2, 1) uint8
    out[name + ".quant_map"] = w.quant_map.cpu();
    quant::QuantStateInfo info;
    info.blocksize = static_cast<int>(w.blocksize);
    info.dtype = dtype_text(w.original_dtype);
    info.shape = {w.out_features, w.in_features};
    if (w.double_quantized()) {
        out[name + ".absmax"] = w.absmax_codes.cpu();
        out[name + ".nested_absmax"] = w.nested_absmax.cpu();
        out[name + ".nested_quant_map"] = w.nested_quant_map.cpu();
        info.nested = true;
        info.nested_blocksize = static_cast<int>(w.nested_blocksize);
        info.nested_offset = w.offset;
    } else {
        out[name + ".absmax"] = w.absmax.cpu();
    }
    const std::string text = quant::quant_state_json(info);
    out[name + kQuantStateSuffix] =
        torch::from_blob(const_cast<char*>(text.data()), {static_cast<int64_t>(text.size())}, torch::kUInt8)
            .clone();
}

bool has_nf4_tensors(const io::Checkpoint& checkpoint, const std::string& name) {
    return checkpoint.tensors().count(name + kQuantStateSuffix) > 0;
}

Result<Nf4Weight> read_nf4_tensors(const io::Checkpoint& checkpoint, const std::string& name,
                                   const std::vector<int64_t>& expected) {
    Result<torch::Tensor> state = read(checkpoint, name + kQuantStateSuffix);
    if (!state.ok()) return state.status();
    const std::string text(reinterpret_cast<const char*>(state->data_ptr<uint8_t>()),
                           static_cast<size_t>(state->numel()));
    Result<quant::QuantStateInfo> info = quant::parse_quant_state_json(text);
    if (!info.ok()) return Status::Error(name + kQuantStateSuffix + ": " + info.error());
    if (info->quant_type != "nf4")
        return Status::Error(name + ": quant_type " + info->quant_type + " (nf4 only)");
    if (info->shape != expected) {
        return Status::Error(name + ": quant_state shape " + shape_text(info->shape) + ", model expects " +
                             shape_text(expected));
    }
    Nf4Weight w;
    w.out_features = expected[0];
    w.in_features = expected[1];
    w.blocksize = info->blocksize;
    w.original_dtype = info->dtype == "bfloat16"  ? torch::kBFloat16
                       : info->dtype == "float16" ? torch::kFloat16
                                                  : torch::kFloat32;
    const int64_t n = w.out_features * w.in_features, blocks = (n + w.blocksize - 1) / w.blocksize;
    auto need = [&](const std::string& key, torch::ScalarType dtype, int64_t numel) -> Result<torch::Tensor> {
        Result<torch::Tensor> t = read(checkpoint, key);
        if (!t.ok()) return t.status();
        if (t->scalar_type() != dtype || t->numel() != numel) {
            return Status::Error("\"" + key + "\": expected " + std::to_string(numel) + " values of " +
                                 c10::toString(dtype) + ", got " + shape_text(t->sizes().vec()) + " " +
                                 c10::toString(t->scalar_type()));
        }
        return t->view({-1});
    };
    Result<torch::Tensor> packed = need(name, torch::kUInt8, (n + 1) / 2);
    Result<torch::Tensor> quant_map = need(name + ".quant_map", torch::kFloat32, 16);
    if (!packed.ok()) return packed.status();
    if (!quant_map.ok()) return quant_map.status();
    w.packed = *packed;
    w.quant_map = *quant_map;
    if (info->nested) {
        Result<torch::Tensor> codes = need(name + ".absmax", torch::kUInt8, blocks);
        Result<torch::Tensor> nested = need(name + ".nested_absmax", torch::kFloat32,
                                            (blocks + info->nested_blocksize - 1) / info->nested_blocksize);
        Result<torch::Tensor> nested_map = need(name + ".nested_quant_map", torch::kFloat32, 256);
        for (const Result<torch::Tensor>* r : {&codes, &nested, &nested_map}) {
            if (!r->ok()) return r->status();
        }
        w.absmax_codes = *codes;
        w.nested_absmax = *nested;
        w.nested_quant_map = *nested_map;
        w.offset = static_cast<float>(info->nested_offset);
        w.nested_blocksize = info->nested_blocksize;
    } else {
        Result<torch::Tensor> absmax = need(name + ".absmax", torch::kFloat32, blocks);
        if (!absmax.ok()) return absmax.status();
        w.absmax = *absmax;
    }
    return w;
}

}  // namespace slipway::model
