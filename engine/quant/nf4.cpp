// NF4 codec with bitsandbytes' numbers, as plain loops (the CUDA kernel is later work). Every step cites the
// bitsandbytes source it follows in engine/quant/README.md; tests/quant compares it bit for bit with
// tests/quant/nf4_reference.py.
#include "quant/nf4.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include <nlohmann/json.hpp>

namespace slipway::quant {

const std::array<float, 16> kNf4Codes = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};

uint8_t nf4_code(float x) {
    // dQuantizeNF4 (csrc/kernels.cu): a value on a midpoint goes down (strict >); NaN fails every test -> 0.
    if (x > 0.03979014977812767f) {
        if (x > 0.3893125355243683f) {
            if (x > 0.6427869200706482f) return x > 0.8614784181118011f ? 0b1111 : 0b1110;
            return x > 0.5016634166240692f ? 0b1101 : 0b1100;
        }
        if (x > 0.2035212516784668f) return x > 0.2920137718319893f ? 0b1011 : 0b1010;
        return x > 0.1202552504837513f ? 0b1001 : 0b1000;
    }
    if (x > -0.33967943489551544f) {
        if (x > -0.13791173323988914f) return x > -0.045525018125772476f ? 0b0111 : 0b0110;
        return x > -0.23460740596055984f ? 0b0101 : 0b0100;
    }
    if (x > -0.6106329262256622f) return x > -0.4599952697753906f ? 0b0011 : 0b0010;
    return x > -0.8480964004993439f ? 0b0001 : 0b0000;
}

float bf16_to_float(uint16_t bits) {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t float_to_bf16(float x) {
    if (std::isnan(x)) return 0x7FC0;
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    uint32_t rounding_bias = ((u >> 16) & 1u) + 0x7FFFu;
    return static_cast<uint16_t>((u + rounding_bias) >> 16);
}

namespace {

bool valid_blocksize(int b) {
    return b >= 32 && b <= 4096 && (b & (b - 1)) == 0;
}

// The block absmax as kQuantizeBlockwise reduces it: fmaxf from -FLT_MAX over |x| (fmaxf drops NaN).
float block_absmax(const float* x, size_t count) {
    float m = -std::numeric_limits<float>::max();
    for (size_t i = 0; i < count; ++i)
        m = std::fmax(m, std::fabs(x[i]));
    return m;
}

}  // namespace

Result<Nf4Tensor> quantize_nf4(const float* x, size_t n, int blocksize) {
    if (!valid_blocksize(blocksize))
        return Result<Nf4Tensor>::Error("quantize_nf4: blocksize must be a power of two in [32, 4096], got " +
                                        std::to_string(blocksize));
    if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
        return Result<Nf4Tensor>::Error("quantize_nf4: more than 2^31-1 values");
    Nf4Tensor t;
    t.n = n;
    t.blocksize = blocksize;
    const size_t blocks = (n + blocksize - 1) / blocksize;
    t.absmax.resize(blocks);
    t.packed.assign((n + 1) / 2, 0);
    for (size_t b = 0; b < blocks; ++b) {
        const size_t begin = b * blocksize;
        const size_t count = std::min<size_t>(blocksize, n - begin);
        const float amax = block_absmax(x + begin, count);
        t.absmax[b] = amax;
        const float scale = 1.0f / amax;  // the kernel multiplies by the reciprocal, it does not divide
        for (size_t i = 0; i < count; ++i) {
            const size_t k = begin + i;
            const uint8_t code = nf4_code(x[k] * scale);
            if (k % 2 == 0)
                t.packed[k / 2] = static_cast<uint8_t>(code << 4);
            else
                t.packed[k / 2] |= code;
        }
        // An odd n: the last byte's low nibble is the padding value 0 quantized (0 * scale).
        if (count % 2 == 1 && b + 1 == blocks) t.packed[(begin + count) / 2] |= nf4_code(0.0f * scale);
    }
    return t;
}

Result<Nf4Tensor> quantize_nf4_bf16(const uint16_t* x_bf16, size_t n, int blocksize) {
    std::vector<float> x(n);  // x: (n) float, exact
    for (size_t i = 0; i < n; ++i)
        x[i] = bf16_to_float(x_bf16[i]);
    return quantize_nf4(x.data(), n, blocksize);
}

namespace {

Status check_tensor(const Nf4Tensor& t) {
    if (!valid_blocksize(t.blocksize))
        return Status::Error("dequantize_nf4: invalid blocksize " + std::to_string(t.blocksize));
    if (t.packed.size() != (t.n + 1) / 2)
        return Status::Error("dequantize_nf4: packed has " + std::to_string(t.packed.size()) +
                             " bytes, expected " + std::to_string((t.n + 1) / 2));
    if (t.absmax.size() != (t.n + t.blocksize - 1) / t.blocksize)
        return Status::Error("dequantize_nf4: absmax has " + std::to_string(t.absmax.size()) +
                             " values, expected " + std::to_string((t.n + t.blocksize - 1) / t.blocksize));
    return Status::Ok();
}

float dequantize_one(const Nf4Tensor& t, size_t k) {
    const uint8_t byte = t.packed[k / 2];
    const uint8_t code = (k % 2 == 0) ? (byte >> 4) : (byte & 0x0F);
    return kNf4Codes[code] * t.absmax[k / t.blocksize];
}

}  // namespace

Status dequantize_nf4(const Nf4Tensor& t, float* out) {
    if (Status s = check_tensor(t); !s.ok()) return s;
    for (size_t k = 0; k < t.n; ++k)
        out[k] = dequantize_one(t, k);
    return Status::Ok();
}

Status dequantize_nf4_bf16(const Nf4Tensor& t, uint16_t* out) {
    if (Status s = check_tensor(t); !s.ok()) return s;
    for (size_t k = 0; k < t.n; ++k)
        out[k] = float_to_bf16(dequantize_one(t, k));
    return Status::Ok();
}

namespace {

// torch.linspace(0.1, 1, steps, dtype=float32) on CPU (aten RangeFactoriesKernel, scalar path): step in
// float, the first half counted up from start, the second half down from end.
std::vector<float> linspace_f32(float start, float end, int steps) {
    std::vector<float> v(steps);
    const float step = (end - start) / static_cast<float>(steps - 1);
    const int halfway = steps / 2;
    for (int i = 0; i < steps; ++i)
        v[i] = i < halfway ? start + step * static_cast<float>(i)
                           : end - step * static_cast<float>(steps - i - 1);
    return v;
}

// 8-bit code of x scaled into [-1, 1]: dQuantize<0> (csrc/kernels.cu), a binary search over the sorted map
// and a midpoint test against the neighbour on the side x lies.
uint8_t dynamic_code(const std::array<float, 256>& code, float x) {
    int pivot = 127, upper_pivot = 255, lower_pivot = 0;
    float lower = -1.0f, upper = 1.0f;
    float val = code[pivot];
    for (int i = 64; i > 0; i >>= 1) {
        if (x > val) {
            lower_pivot = pivot;
            lower = val;
            pivot += i;
        } else {
            upper_pivot = pivot;
            upper = val;
            pivot -= i;
        }
        val = code[pivot];
    }
    if (upper_pivot == 255) upper = code[upper_pivot];
    if (lower_pivot == 0) lower = code[lower_pivot];
    if (x > val) {
        const float midpoint = (upper + val) * 0.5f;
        return static_cast<uint8_t>(x > midpoint ? upper_pivot : pivot);
    }
    const float midpoint = (lower + val) * 0.5f;
    return static_cast<uint8_t>(x < midpoint ? lower_pivot : pivot);
}

}  // namespace

std::array<float, 256> dynamic_map_signed() {
    // create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8): additional_items = 0.
    std::vector<float> data;
    for (int i = 0; i < 7; ++i) {
        const int fraction_items = (1 << i) + 1;
        const std::vector<float> b = linspace_f32(0.1f, 1.0f, fraction_items);
        const float scale = static_cast<float>(std::pow(10.0, -6 + i));  // the Python scalar, cast by torch
        for (int j = 0; j + 1 < fraction_items; ++j) {
            const float mean = (b[j] + b[j + 1]) / 2.0f;
            data.push_back(scale * mean);
            data.push_back(-scale * mean);
        }
    }
    data.push_back(0.0f);
    data.push_back(1.0f);
    std::sort(data.begin(), data.end());
    std::array<float, 256> out{};
    std::copy(data.begin(), data.end(), out.begin());
    return out;
}

Result<DoubleQuantized> double_quantize_absmax(const std::vector<float>& absmax, int nested_blocksize) {
    if (!valid_blocksize(nested_blocksize))
        return Result<DoubleQuantized>::Error("double_quantize_absmax: invalid blocksize " +
                                              std::to_string(nested_blocksize));
    if (absmax.empty()) return Result<DoubleQuantized>::Error("double_quantize_absmax: no absmax values");
    DoubleQuantized dq;
    dq.nested_blocksize = nested_blocksize;
    dq.nested_quant_map = dynamic_map_signed();
    // offset = _absmax.mean(): summed in double and rounded once (torch's float reduction order differs by
    // device; the offset is stored, so dequantization never depends on how it was computed).
    double sum = 0.0;
    for (float a : absmax)
        sum += a;
    dq.offset = static_cast<float>(sum / static_cast<double>(absmax.size()));
    const size_t n = absmax.size();
    std::vector<float> centred(n);  // (n): absmax - offset, float32
    for (size_t i = 0; i < n; ++i)
        centred[i] = absmax[i] - dq.offset;
    const size_t blocks = (n + nested_blocksize - 1) / nested_blocksize;
    dq.nested_absmax.resize(blocks);
    dq.codes.resize(n);
    for (size_t b = 0; b < blocks; ++b) {
        const size_t begin = b * nested_blocksize;
        const size_t count = std::min<size_t>(nested_blocksize, n - begin);
        const float amax = block_absmax(centred.data() + begin, count);
        dq.nested_absmax[b] = amax;
        const float scale = 1.0f / amax;
        for (size_t i = 0; i < count; ++i)
            dq.codes[begin + i] = dynamic_code(dq.nested_quant_map, centred[begin + i] * scale);
    }
    return dq;
}

Result<std::vector<float>> dequantize_absmax(const DoubleQuantized& dq) {
    const size_t n = dq.codes.size();
    if (!valid_blocksize(dq.nested_blocksize))
        return Result<std::vector<float>>::Error("dequantize_absmax: invalid blocksize");
    if (dq.nested_absmax.size() != (n + dq.nested_blocksize - 1) / dq.nested_blocksize)
        return Result<std::vector<float>>::Error("dequantize_absmax: nested_absmax has " +
                                                 std::to_string(dq.nested_absmax.size()) + " values for " +
                                                 std::to_string(n) + " codes");
    std::vector<float> out(n);  // (n) float32
    for (size_t i = 0; i < n; ++i) {
        const float v = dq.nested_quant_map[dq.codes[i]] * dq.nested_absmax[i / dq.nested_blocksize];
        out[i] = v + dq.offset;  // dequantize_blockwise, then `absmax += quant_state.offset`
    }
    return out;
}

namespace {

// A finite double as Python's repr (and so json.dumps) writes it: the shortest digits that read back to the
// same value, in fixed notation for decimal exponents -4..15 and as 1.5e-05 / 1e+16 otherwise. nlohmann's
// dump() picks short digits too, but not always the shortest (0.26393085718154907 for 0.2639308571815491).
std::string python_float_repr(double v) {
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::scientific);
    std::string_view text(buffer, static_cast<size_t>(end - buffer));  // "-2.639308571815491e-01"
    std::string sign;
    if (text.front() == '-') {
        sign = "-";
        text.remove_prefix(1);
    }
    const size_t e_at = text.find('e');
    std::string digits(text.substr(0, e_at));
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    const int exponent = std::stoi(std::string(text.substr(e_at + 1)));
    if (exponent < -4 || exponent >= 16) {
        std::string mantissa = digits.substr(0, 1);
        if (digits.size() > 1) mantissa += "." + digits.substr(1);
        const int magnitude = std::abs(exponent);
        return sign + mantissa + (exponent < 0 ? "e-" : "e+") + (magnitude < 10 ? "0" : "") +
               std::to_string(magnitude);
    }
    if (exponent < 0) return sign + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    const size_t whole = static_cast<size_t>(exponent) + 1;
    if (digits.size() <= whole) return sign + digits + std::string(whole - digits.size(), '0') + ".0";
    return sign + digits.substr(0, whole) + "." + digits.substr(whole);
}

}  // namespace

std::string quant_state_json(const QuantStateInfo& info) {
    // QuantState.as_dict(packed=True): the non-tensor items, in this order, as Python's json.dumps writes
    // them (", " and ": " separators; numbers in their shortest round-trip form).
    nlohmann::ordered_json j;
    j["quant_type"] = info.quant_type;
    j["blocksize"] = info.blocksize;
    j["dtype"] = info.dtype;
    j["shape"] = info.shape;
    if (info.nested) {
        j["nested_blocksize"] = info.nested_blocksize;
        j["nested_dtype"] = info.nested_dtype;
        j["nested_offset"] = info.nested_offset;
    }
    std::string out = "{";
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (it != j.begin()) out += ", ";
        out += nlohmann::json(it.key()).dump() + ": ";
        if (it.value().is_array()) {
            out += "[";
            for (size_t i = 0; i < it.value().size(); ++i)
                out += (i ? ", " : "") + it.value()[i].dump();
            out += "]";
        } else if (it.value().is_number_float() && !std::isfinite(it.value().get<double>())) {
            const double v = it.value().get<double>();  // json.dumps writes these non-standard tokens
            out += std::isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity");
        } else if (it.value().is_number_float()) {
            out += python_float_repr(it.value().get<double>());
        } else {
            out += it.value().dump();
        }
    }
    return out + "}";
}

Result<QuantStateInfo> parse_quant_state_json(const std::string& text) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
        return Result<QuantStateInfo>::Error(
            "quant_state: not a JSON object (a non-finite nested_offset, NaN or Infinity, is refused too)");
    QuantStateInfo info;
    auto need = [&](const char* key) { return j.contains(key); };
    if (!need("quant_type") || !j["quant_type"].is_string())
        return Result<QuantStateInfo>::Error("quant_state: /quant_type missing or not a string");
    info.quant_type = j["quant_type"].get<std::string>();
    if (info.quant_type != "nf4" && info.quant_type != "fp4")
        return Result<QuantStateInfo>::Error("quant_state: /quant_type must be nf4 or fp4, got " +
                                             info.quant_type);
    if (!need("blocksize") || !j["blocksize"].is_number_integer())
        return Result<QuantStateInfo>::Error("quant_state: /blocksize missing or not an integer");
    info.blocksize = j["blocksize"].get<int>();
    if (!valid_blocksize(info.blocksize))
        return Result<QuantStateInfo>::Error("quant_state: /blocksize must be a power of two in [32, 4096]");
    if (!need("dtype") || !j["dtype"].is_string())
        return Result<QuantStateInfo>::Error("quant_state: /dtype missing or not a string");
    info.dtype = j["dtype"].get<std::string>();
    if (need("shape") && !j["shape"].is_null()) {
        if (!j["shape"].is_array())
            return Result<QuantStateInfo>::Error("quant_state: /shape must be a list");
        for (const auto& d : j["shape"]) {
            if (!d.is_number_integer() || d.get<int64_t>() < 0)
                return Result<QuantStateInfo>::Error("quant_state: /shape must hold non-negative integers");
            info.shape.push_back(d.get<int64_t>());
        }
    }
    info.nested = need("nested_offset");
    if (info.nested) {
        if (!j["nested_offset"].is_number())
            return Result<QuantStateInfo>::Error("quant_state: /nested_offset must be a number");
        info.nested_offset = j["nested_offset"].get<double>();
        if (!need("nested_blocksize") || !j["nested_blocksize"].is_number_integer())
            return Result<QuantStateInfo>::Error("quant_state: /nested_blocksize missing");
        info.nested_blocksize = j["nested_blocksize"].get<int>();
        if (!valid_blocksize(info.nested_blocksize))
            return Result<QuantStateInfo>::Error(
                "quant_state: /nested_blocksize must be a power of two in [32, 4096]");
        if (!need("nested_dtype") || !j["nested_dtype"].is_string())
            return Result<QuantStateInfo>::Error("quant_state: /nested_dtype missing");
        info.nested_dtype = j["nested_dtype"].get<std::string>();
    }
    return info;
}

}  // namespace slipway::quant
