// GGUF files without torch or ggml: a streaming writer (metadata key/values, then tensors in F32, F16,
// BF16 or Q8_0 produced a chunk of rows at a time, so a large model is never held twice in memory) and
// the float conversions it uses, bit-exact with ggml's reference code. Layout (GGUF version 3, little-
// endian): "GGUF", version, tensor count, key/value count, the key/values, the tensor infos (name, dims
// innermost first, type, offset), zero padding to 32 bytes, then each tensor's bytes padded to 32.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "contract/file_system.h"
#include "contract/status.h"

namespace slipway::io {

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as a little-endian uint32
inline constexpr uint32_t kGgufVersion = 3;
inline constexpr uint64_t kGgufAlignment = 32;   // general.alignment's default; this writer never changes it
inline constexpr size_t kGgufMaxNameBytes = 63;  // GGML_MAX_NAME (64) less the terminating NUL
inline constexpr size_t kGgufMaxDims = 4;        // GGML_MAX_DIMS

// ggml_type values of the tensor types written here.
enum class GgufType : uint32_t { kF32 = 0, kF16 = 1, kQ8_0 = 8, kBF16 = 30 };
const char* gguf_type_name(GgufType type);  // "F32", "F16", "Q8_0", "BF16"

// gguf_type values of metadata.
enum class GgufValueType : uint32_t {
    kU8 = 0,
    kI8 = 1,
    kU16 = 2,
    kI16 = 3,
    kU32 = 4,
    kI32 = 5,
    kF32 = 6,
    kBool = 7,
    kString = 8,
    kArray = 9,
    kU64 = 10,
    kI64 = 11,
    kF64 = 12,
};

// Q8_0: blocks of 32 values, each an fp16 scale d = amax / 127 then 32 int8 codes q ~ x / d (34 bytes).
inline constexpr int64_t kQ8_0BlockValues = 32;
inline constexpr int64_t kQ8_0BlockBytes = 2 + kQ8_0BlockValues;

// fp32 -> IEEE half, round to nearest even; overflow gives inf, NaN stays NaN (quiet), subnormals kept.
uint16_t fp32_to_fp16(float value);
float fp16_to_fp32(uint16_t half);
// fp32 -> bfloat16, round to nearest even; NaN stays NaN (quietened, as ggml_compute_fp32_to_bf16).
uint16_t fp32_to_bf16(float value);
float bf16_to_fp32(uint16_t value);
// One row of n values (n a multiple of 32, all finite) into n / 32 blocks, as ggml's
// quantize_row_q8_0_ref: q = roundf(x * (1 / d)), half away from zero.
void quantize_row_q8_0(const float* values, int64_t n, uint8_t* blocks);
void dequantize_row_q8_0(const uint8_t* blocks, int64_t n, float* values);

// Bytes one row of `row_length` values takes in `type` (Q8_0: row_length must be a multiple of 32).
uint64_t gguf_row_bytes(GgufType type, int64_t row_length);

// Fills `rows` with rows [first_row, first_row + row_count) of a tensor, row-major float32
// (row_count x the innermost dimension). The writer calls it in increasing row order, in chunks.
using GgufRowSource = std::function<Status(int64_t first_row, int64_t row_count, float* rows)>;

class GgufWriter {
public:
    // Metadata, written in the order first set; setting a key again replaces its value in place.
    void set_u8(const std::string& key, uint8_t value);
    void set_i8(const std::string& key, int8_t value);
    void set_u16(const std::string& key, uint16_t value);
    void set_i16(const std::string& key, int16_t value);
    void set_u32(const std::string& key, uint32_t value);
    void set_i32(const std::string& key, int32_t value);
    void set_u64(const std::string& key, uint64_t value);
    void set_i64(const std::string& key, int64_t value);
    void set_f32(const std::string& key, float value);
    void set_f64(const std::string& key, double value);
    void set_bool(const std::string& key, bool value);
    void set_string(const std::string& key, const std::string& value);
    void set_string_array(const std::string& key, const std::vector<std::string>& values);
    void set_i32_array(const std::string& key, const std::vector<int32_t>& values);
    void set_u32_array(const std::string& key, const std::vector<uint32_t>& values);
    void set_f32_array(const std::string& key, const std::vector<float>& values);
    bool has_key(const std::string& key) const { return index_.count(key) != 0; }
    size_t key_count() const { return kvs_.size(); }

    // A tensor of `shape` in PyTorch/HF order (outermost first, e.g. (out_features, in_features)); the
    // file stores the dims reversed, as ggml does. Refused, naming the tensor: an empty, repeated or too
    // long name, a shape of 0 or more than 4 dims or a dim < 1, Q8_0 with an innermost dim not a multiple
    // of 32. Tensors are written in the order added.
    [[nodiscard]] Status add_tensor(const std::string& name, const std::vector<int64_t>& shape, GgufType type,
                                    GgufRowSource source);
    // The same from float32 data the caller keeps alive until write() returns.
    [[nodiscard]] Status add_tensor(const std::string& name, const std::vector<int64_t>& shape, GgufType type,
                                    const float* data);
    // The same from float32 data the writer keeps (small tensors: rope_freqs, tests).
    [[nodiscard]] Status add_tensor(const std::string& name, const std::vector<int64_t>& shape, GgufType type,
                                    std::vector<float> data);
    size_t tensor_count() const { return tensors_.size(); }

    // Writes the file at `path` atomically and durably (AtomicFile: a temporary in the same folder, fsync,
    // rename); the error names the path and the cause (a full disk, a failing row source, a non-finite
    // value in a Q8_0 tensor). The writer can write again afterwards.
    [[nodiscard]] Status write(const std::string& path, FileSystem& fs = default_file_system()) const;

    // Size of the file write() makes.
    uint64_t file_bytes() const;

private:
    struct Tensor {
        std::string name;
        std::vector<int64_t> shape;  // HF order
        GgufType type;
        int64_t rows;        // product of all dims but the innermost
        int64_t row_length;  // innermost dim
        uint64_t bytes;
        GgufRowSource source;
    };
    void set(const std::string& key, GgufValueType type, std::string payload);
    std::string header_bytes() const;  // everything before the tensor data, padding included

    std::vector<std::pair<std::string, std::string>> kvs_;  // key, encoded type + value
    std::map<std::string, size_t> index_;
    std::vector<Tensor> tensors_;
    std::map<std::string, size_t> tensor_index_;
};

}  // namespace slipway::io
