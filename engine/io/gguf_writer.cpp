// GgufWriter of gguf_writer.h: metadata encoding, tensor infos, streamed row conversion (F32, F16, BF16,
// Q8_0) and the atomic write; plus the scalar conversions, kept bit-exact with ggml so a file written here
// holds the bytes llama.cpp's own converter would write for the same floats.
#include "io/gguf_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>

namespace slipway::io {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "GGUF is little-endian; rows are copied as they are");

namespace {

// Rows are converted this many float32 values at a time (16 MiB): bounded memory whatever the tensor.
constexpr int64_t kChunkValues = int64_t{1} << 22;

uint32_t bits_of(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

float float_of(uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

template <typename T>
void put(std::string& out, T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.append(bytes, sizeof(T));
}

void put_string(std::string& out, const std::string& s) {
    put<uint64_t>(out, s.size());
    out.append(s);
}

uint64_t padded(uint64_t n) {
    return (n + kGgufAlignment - 1) / kGgufAlignment * kGgufAlignment;
}

template <typename T>
std::string array_payload(GgufValueType element, const std::vector<T>& values) {
    std::string out;
    out.reserve(12 + values.size() * sizeof(T));
    put<uint32_t>(out, static_cast<uint32_t>(element));
    put<uint64_t>(out, values.size());
    for (const T& v : values)
        put<T>(out, v);
    return out;
}

template <typename T>
std::string scalar_payload(T value) {
    std::string out;
    put<T>(out, value);
    return out;
}

}  // namespace

const char* gguf_type_name(GgufType type) {
    switch (type) {
        case GgufType::kF32:
            return "F32";
        case GgufType::kF16:
            return "F16";
        case GgufType::kQ8_0:
            return "Q8_0";
        case GgufType::kBF16:
            return "BF16";
    }
    return "?";
}

uint16_t fp32_to_fp16(float value) {
    const uint32_t x = bits_of(value);
    const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000);
    const uint32_t abs = x & 0x7fffffff;
    if (abs > 0x7f800000) return sign | 0x7e00;  // NaN: a quiet NaN of the same sign
    // From 65520 (halfway between the largest half, 65504, and 65536) on, the even neighbour is inf.
    if (abs >= 0x477ff000) return sign | 0x7c00;
    if (abs >= 0x38800000) {  // a normal half (>= 2^-14)
        const uint32_t exponent = (abs >> 23) - 127 + 15;
        const uint32_t mantissa = abs & 0x7fffff;
        uint32_t half = (exponent << 10) | (mantissa >> 13);
        const uint32_t rest = mantissa & 0x1fff;
        if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // a carry moves into the exponent
        return sign | static_cast<uint16_t>(half);
    }
    // A subnormal half: the value in units of 2^-24, rounded to nearest even.
    const uint32_t exponent = abs >> 23;
    if (exponent < 102) return sign;  // below 2^-25: rounds to zero (fp32 subnormals included)
    const uint32_t mantissa = (abs & 0x7fffff) | 0x800000;
    const uint32_t shift = 126 - exponent;  // 14..24
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;  // 0x400 is the smallest normal: right
    return sign | static_cast<uint16_t>(half);
}

float fp16_to_fp32(uint16_t half) {
    const uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
    const uint32_t exponent = (half >> 10) & 0x1f;
    const uint32_t mantissa = half & 0x3ff;
    if (exponent == 0x1f) return float_of(sign | 0x7f800000 | (mantissa << 13));
    if (exponent != 0) return float_of(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
    // Zero or subnormal: mantissa x 2^-24, exact in float.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
}

uint16_t fp32_to_bf16(float value) {
    const uint32_t x = bits_of(value);
    if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 64);  // NaN: set quiet bit
    return static_cast<uint16_t>((x + (0x7fff + ((x >> 16) & 1))) >> 16);
}

float bf16_to_fp32(uint16_t value) {
    return float_of(static_cast<uint32_t>(value) << 16);
}

void quantize_row_q8_0(const float* values, int64_t n, uint8_t* blocks) {
    for (int64_t b = 0; b < n / kQ8_0BlockValues; ++b) {
        const float* x = values + b * kQ8_0BlockValues;
        uint8_t* block = blocks + b * kQ8_0BlockBytes;
        float amax = 0.0f;
        for (int64_t j = 0; j < kQ8_0BlockValues; ++j)
            amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;  // x * (1 / d), as ggml: not always x / d's bits
        const uint16_t d16 = fp32_to_fp16(d);
        std::memcpy(block, &d16, 2);
        for (int64_t j = 0; j < kQ8_0BlockValues; ++j) {
            const auto q = static_cast<int8_t>(std::roundf(x[j] * id));
            std::memcpy(block + 2 + j, &q, 1);
        }
    }
}

void dequantize_row_q8_0(const uint8_t* blocks, int64_t n, float* values) {
    for (int64_t b = 0; b < n / kQ8_0BlockValues; ++b) {
        const uint8_t* block = blocks + b * kQ8_0BlockBytes;
        uint16_t d16;
        std::memcpy(&d16, block, 2);
        const float d = fp16_to_fp32(d16);
        for (int64_t j = 0; j < kQ8_0BlockValues; ++j) {
            int8_t q;
            std::memcpy(&q, block + 2 + j, 1);
            values[b * kQ8_0BlockValues + j] = static_cast<float>(q) * d;
        }
    }
}

uint64_t gguf_row_bytes(GgufType type, int64_t row_length) {
    const auto n = static_cast<uint64_t>(row_length);
    switch (type) {
        case GgufType::kF32:
            return n * 4;
        case GgufType::kF16:
        case GgufType::kBF16:
            return n * 2;
        case GgufType::kQ8_0:
            return n / kQ8_0BlockValues * kQ8_0BlockBytes;
    }
    return 0;
}

void GgufWriter::set(const std::string& key, GgufValueType type, std::string payload) {
    std::string encoded;
    encoded.reserve(4 + payload.size());
    put<uint32_t>(encoded, static_cast<uint32_t>(type));
    encoded.append(payload);
    const auto it = index_.find(key);
    if (it != index_.end()) {
        kvs_[it->second].second = std::move(encoded);
        return;
    }
    index_[key] = kvs_.size();
    kvs_.emplace_back(key, std::move(encoded));
}

void GgufWriter::set_u8(const std::string& key, uint8_t v) {
    set(key, GgufValueType::kU8, scalar_payload(v));
}
void GgufWriter::set_i8(const std::string& key, int8_t v) {
    set(key, GgufValueType::kI8, scalar_payload(v));
}
void GgufWriter::set_u16(const std::string& key, uint16_t v) {
    set(key, GgufValueType::kU16, scalar_payload(v));
}
void GgufWriter::set_i16(const std::string& key, int16_t v) {
    set(key, GgufValueType::kI16, scalar_payload(v));
}
void GgufWriter::set_u32(const std::string& key, uint32_t v) {
    set(key, GgufValueType::kU32, scalar_payload(v));
}
void GgufWriter::set_i32(const std::string& key, int32_t v) {
    set(key, GgufValueType::kI32, scalar_payload(v));
}
void GgufWriter::set_u64(const std::string& key, uint64_t v) {
    set(key, GgufValueType::kU64, scalar_payload(v));
}
void GgufWriter::set_i64(const std::string& key, int64_t v) {
    set(key, GgufValueType::kI64, scalar_payload(v));
}
void GgufWriter::set_f32(const std::string& key, float v) {
    set(key, GgufValueType::kF32, scalar_payload(v));
}
void GgufWriter::set_f64(const std::string& key, double v) {
    set(key, GgufValueType::kF64, scalar_payload(v));
}
void GgufWriter::set_bool(const std::string& key, bool v) {
    set(key, GgufValueType::kBool, scalar_payload<uint8_t>(v ? 1 : 0));
}

void GgufWriter::set_string(const std::string& key, const std::string& value) {
    std::string payload;
    put_string(payload, value);
    set(key, GgufValueType::kString, std::move(payload));
}

void GgufWriter::set_string_array(const std::string& key, const std::vector<std::string>& values) {
    std::string payload;
    size_t total = 12;
    for (const std::string& v : values)
        total += 8 + v.size();
    payload.reserve(total);
    put<uint32_t>(payload, static_cast<uint32_t>(GgufValueType::kString));
    put<uint64_t>(payload, values.size());
    for (const std::string& v : values)
        put_string(payload, v);
    set(key, GgufValueType::kArray, std::move(payload));
}

void GgufWriter::set_i32_array(const std::string& key, const std::vector<int32_t>& values) {
    set(key, GgufValueType::kArray, array_payload(GgufValueType::kI32, values));
}

void GgufWriter::set_u32_array(const std::string& key, const std::vector<uint32_t>& values) {
    set(key, GgufValueType::kArray, array_payload(GgufValueType::kU32, values));
}

void GgufWriter::set_f32_array(const std::string& key, const std::vector<float>& values) {
    set(key, GgufValueType::kArray, array_payload(GgufValueType::kF32, values));
}

Status GgufWriter::add_tensor(const std::string& name, const std::vector<int64_t>& shape, GgufType type,
                              GgufRowSource source) {
    if (name.empty()) return Status::Error("GGUF tensor: empty name");
    if (name.size() > kGgufMaxNameBytes) {
        return Status::Error("GGUF tensor " + name + ": name longer than " +
                             std::to_string(kGgufMaxNameBytes) + " bytes (ggml's limit)");
    }
    if (tensor_index_.count(name) != 0) return Status::Error("GGUF tensor " + name + ": added twice");
    if (shape.empty() || shape.size() > kGgufMaxDims) {
        return Status::Error("GGUF tensor " + name + ": " + std::to_string(shape.size()) +
                             " dims (1 to 4 allowed)");
    }
    int64_t rows = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] < 1 || shape[i] > (int64_t{1} << 40)) {
            return Status::Error("GGUF tensor " + name + ": dim " + std::to_string(i) + " is " +
                                 std::to_string(shape[i]));
        }
        if (i + 1 < shape.size()) rows *= shape[i];
    }
    const int64_t row_length = shape.back();
    if (type == GgufType::kQ8_0 && row_length % kQ8_0BlockValues != 0) {
        return Status::Error("GGUF tensor " + name + ": rows of " + std::to_string(row_length) +
                             " values cannot be Q8_0 (blocks of 32)");
    }
    if (!source) return Status::Error("GGUF tensor " + name + ": no data");
    tensor_index_[name] = tensors_.size();
    tensors_.push_back(Tensor{name, shape, type, rows, row_length,
                              static_cast<uint64_t>(rows) * gguf_row_bytes(type, row_length),
                              std::move(source)});
    return Status::Ok();
}

Status GgufWriter::add_tensor(const std::string& name, const std::vector<int64_t>& shape, GgufType type,
                              const float* data) {
    const int64_t row_length = shape.empty() ? 0 : shape.back();
    return add_tensor(name, shape, type, [data, row_length](int64_t first, int64_t count, float* rows) {
        std::memcpy(rows, data + first * row_length, static_cast<size_t>(count * row_length) * sizeof(float));
        return Status::Ok();
    });
}

Status GgufWriter::add_tensor(const std::string& name, const std::vector<int64_t>& shape, GgufType type,
                              std::vector<float> data) {
    int64_t numel = 1;
    for (int64_t d : shape)
        numel *= std::max<int64_t>(d, 0);
    if (static_cast<int64_t>(data.size()) != numel) {
        return Status::Error("GGUF tensor " + name + ": " + std::to_string(data.size()) + " values for " +
                             std::to_string(numel) + " elements");
    }
    auto owned = std::make_shared<std::vector<float>>(std::move(data));
    const int64_t row_length = shape.empty() ? 0 : shape.back();
    return add_tensor(name, shape, type, [owned, row_length](int64_t first, int64_t count, float* rows) {
        std::memcpy(rows, owned->data() + first * row_length,
                    static_cast<size_t>(count * row_length) * sizeof(float));
        return Status::Ok();
    });
}

std::string GgufWriter::header_bytes() const {
    std::string out;
    put<uint32_t>(out, kGgufMagic);
    put<uint32_t>(out, kGgufVersion);
    put<uint64_t>(out, tensors_.size());
    put<uint64_t>(out, kvs_.size());
    for (const auto& [key, encoded] : kvs_) {
        put_string(out, key);
        out.append(encoded);
    }
    uint64_t offset = 0;  // from the start of the data section
    for (const Tensor& t : tensors_) {
        put_string(out, t.name);
        put<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
        for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it)  // ggml: ne[0] is the innermost dim
            put<uint64_t>(out, static_cast<uint64_t>(*it));
        put<uint32_t>(out, static_cast<uint32_t>(t.type));
        put<uint64_t>(out, offset);
        offset += padded(t.bytes);
    }
    out.resize(padded(out.size()), '\0');
    return out;
}

uint64_t GgufWriter::file_bytes() const {
    uint64_t total = header_bytes().size();
    for (const Tensor& t : tensors_)
        total += padded(t.bytes);
    return total;
}

Status GgufWriter::write(const std::string& path, FileSystem& fs) const {
    Result<AtomicFile> out = AtomicFile::create(path, {}, fs);
    if (!out.ok()) return out.status();
    if (Status s = out->append(header_bytes()); !s.ok()) return s;
    std::vector<float> values;
    std::string bytes;
    const std::string zeros(kGgufAlignment, '\0');
    for (const Tensor& t : tensors_) {
        const int64_t chunk_rows = std::min(t.rows, std::max<int64_t>(1, kChunkValues / t.row_length));
        values.resize(static_cast<size_t>(chunk_rows * t.row_length));
        const uint64_t row_bytes = gguf_row_bytes(t.type, t.row_length);
        for (int64_t first = 0; first < t.rows; first += chunk_rows) {
            const int64_t count = std::min(chunk_rows, t.rows - first);
            if (Status s = t.source(first, count, values.data()); !s.ok()) {
                return Status::Error(path + ": tensor " + t.name + ": " + s.message());
            }
            const int64_t n = count * t.row_length;
            bytes.resize(static_cast<size_t>(count) * row_bytes);
            auto* dst = reinterpret_cast<uint8_t*>(bytes.data());
            switch (t.type) {
                case GgufType::kF32:
                    std::memcpy(dst, values.data(), static_cast<size_t>(n) * 4);
                    break;
                case GgufType::kF16:
                    for (int64_t i = 0; i < n; ++i) {
                        const uint16_t h = fp32_to_fp16(values[i]);
                        std::memcpy(dst + 2 * i, &h, 2);
                    }
                    break;
                case GgufType::kBF16:
                    for (int64_t i = 0; i < n; ++i) {
                        const uint16_t h = fp32_to_bf16(values[i]);
                        std::memcpy(dst + 2 * i, &h, 2);
                    }
                    break;
                case GgufType::kQ8_0:
                    for (int64_t i = 0; i < n; ++i) {
                        // A NaN or inf has no int8 code (the cast would be undefined): a bug upstream.
                        if (!std::isfinite(values[i])) {
                            return Status::Error(path + ": tensor " + t.name + ": value " +
                                                 std::to_string(values[i]) + " at row " +
                                                 std::to_string(first + i / t.row_length) +
                                                 " cannot be quantized to Q8_0");
                        }
                    }
                    for (int64_t r = 0; r < count; ++r)
                        quantize_row_q8_0(values.data() + r * t.row_length, t.row_length,
                                          dst + r * row_bytes);
                    break;
            }
            if (Status s = out->append(bytes); !s.ok()) return s;
        }
        if (const uint64_t pad = padded(t.bytes) - t.bytes; pad != 0) {
            if (Status s = out->append(std::string_view(zeros.data(), pad)); !s.ok()) return s;
        }
    }
    return out->commit();
}

}  // namespace slipway::io
