// A frozen linear weight stored as bitsandbytes' NF4 (QLoRA): 4-bit codes in blocks of 64 with an fp32
// absmax each, or with double quantization the absmax values as 8-bit codes in blocks of 256 plus an
// offset. Dequantized per use, in forward and again in backward, so only the 4-bit form stays resident.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/types.h>

#include "contract/status.h"

namespace slipway::model {

struct Nf4Weight {
    int64_t out_features = 0, in_features = 0;
    int64_t blocksize = 64;
    torch::Tensor packed;     // (ceil(n / 2)) uint8: element 2k in the high nibble, 2k+1 in the low one
    torch::Tensor quant_map;  // (16) fp32: the NF4 code values
    // Without double quantization: absmax (blocks) fp32. With it: absmax_codes (blocks) uint8,
    // nested_absmax (ceil(blocks / 256)) fp32, nested_quant_map (256) fp32 and offset.
    torch::Tensor absmax;
    torch::Tensor absmax_codes, nested_absmax, nested_quant_map;
    float offset = 0.0f;
    int64_t nested_blocksize = 256;
    torch::ScalarType original_dtype = torch::kFloat32;  // what quant_state's "dtype" records

    bool double_quantized() const { return absmax_codes.defined(); }
    // The block scales as the kernel uses them: absmax, or nested_quant_map[code] * nested_absmax + offset.
    torch::Tensor block_absmax() const;  // (blocks) fp32
    // (out, in) in `dtype`: quant_map[code] * absmax of its block, in fp32 (one multiply, as bitsandbytes'
    // kDequantizeBlockwise), then cast.
    torch::Tensor dequantize(torch::ScalarType dtype) const;
    int64_t resident_bytes() const;
    Nf4Weight to(const torch::Device& device) const;
};

// w: (out, in) of any float dtype, on any device (quantized on the CPU with engine/quant's codec, which
// tests/quant checks bit for bit against bitsandbytes' source).
[[nodiscard]] Result<Nf4Weight> quantize_nf4_weight(const torch::Tensor& w, bool double_quant,
                                                    int64_t blocksize = 64);

// x (..., in) -> x W^T (..., out) with W dequantized in `compute_dtype` (x is cast to it, the result cast
// back to x's dtype, or left in bf16 under bf16 autocast); backward gives x's gradient from W dequantized
// again. W gets none: it is frozen.
torch::Tensor nf4_linear(const torch::Tensor& x, const std::shared_ptr<const Nf4Weight>& w,
                         torch::ScalarType compute_dtype);

}  // namespace slipway::model
