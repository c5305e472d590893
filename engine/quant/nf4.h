// NF4 4-bit quantization with bitsandbytes' numbers (QLoRA): the code table, block absmax, nibble packing,
// the double quantization of the absmax values (8-bit dynamic map, blocks of 256) and the
// `quant_state.bitsandbytes__nf4` JSON blob. Torch-free plain loops; see engine/quant/README.md for the
// bitsandbytes source lines each step follows.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "contract/status.h"

namespace slipway::quant {

// bitsandbytes csrc/kernels.cu nf4_dequantization_lut: code i -> value in [-1, 1].
extern const std::array<float, 16> kNf4Codes;

// One NF4-quantized tensor of n values.
struct Nf4Tensor {
    std::vector<uint8_t> packed;  // ((n + 1) / 2): element 2k in the high nibble, 2k+1 in the low nibble
    std::vector<float> absmax;    // (ceil(n / blocksize)): max |x| of each block, float32
    size_t n = 0;
    int blocksize = 64;
};

// The absmax values quantized again (bitsandbytes quantize_4bit(compress_statistics=True)).
struct DoubleQuantized {
    std::vector<uint8_t> codes;               // (n_absmax): 8-bit dynamic codes of absmax - offset
    std::vector<float> nested_absmax;         // (ceil(n_absmax / nested_blocksize))
    std::array<float, 256> nested_quant_map;  // create_dynamic_map(signed=True)
    float offset = 0.0f;                      // mean of the absmax values
    int nested_blocksize = 256;
};

// What the `weight.quant_state.bitsandbytes__nf4` uint8 tensor holds (a JSON object).
struct QuantStateInfo {
    std::string quant_type = "nf4";
    int blocksize = 64;
    std::string dtype = "bfloat16";  // the dtype of the original weight
    std::vector<int64_t> shape;      // the original weight's shape, e.g. (out_features, in_features)
    bool nested = false;
    int nested_blocksize = 256;
    std::string nested_dtype = "float32";
    double nested_offset = 0.0;
};

// NF4 code of one value already scaled into [-1, 1]: the decision tree of dQuantizeNF4 (strict >).
uint8_t nf4_code(float x);

// bf16 bits -> float (exact: the bits shifted up, as torch does) and float -> bf16 (round to nearest even,
// NaN kept quiet, as torch's c10::BFloat16 round_to_nearest_even).
float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float x);

// x: (n) -> packed (ceil(n/2)), absmax (ceil(n/blocksize)). blocksize: a power of two in [32, 4096].
[[nodiscard]] Result<Nf4Tensor> quantize_nf4(const float* x, size_t n, int blocksize = 64);
[[nodiscard]] Result<Nf4Tensor> quantize_nf4_bf16(const uint16_t* x_bf16, size_t n, int blocksize = 64);

// packed + absmax -> out: (t.n) floats, out[i] = kNf4Codes[code_i] * absmax[i / blocksize].
[[nodiscard]] Status dequantize_nf4(const Nf4Tensor& t, float* out);
// The same product rounded to bf16 (bitsandbytes' kernel computes in float and stores as T).
[[nodiscard]] Status dequantize_nf4_bf16(const Nf4Tensor& t, uint16_t* out);

// bitsandbytes create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8): 256 sorted floats.
std::array<float, 256> dynamic_map_signed();

// absmax (n) -> offset = mean, codes of (absmax - offset) by 8-bit blockwise dynamic quantization.
[[nodiscard]] Result<DoubleQuantized> double_quantize_absmax(const std::vector<float>& absmax,
                                                             int nested_blocksize = 256);
// The inverse: absmax[i] = nested_quant_map[codes[i]] * nested_absmax[i / nested_blocksize] + offset.
[[nodiscard]] Result<std::vector<float>> dequantize_absmax(const DoubleQuantized& dq);

// The JSON text bitsandbytes stores (as uint8 bytes) under `<name>.quant_state.bitsandbytes__nf4`.
std::string quant_state_json(const QuantStateInfo& info);
[[nodiscard]] Result<QuantStateInfo> parse_quant_state_json(const std::string& text);

}  // namespace slipway::quant
