// NF4 dequantization on a GPU (nf4_dequant.cu): one CUDA kernel that does what bitsandbytes'
// kDequantizeBlockwise does for NF4 (and, with double quantization, its dequantize_blockwise of the absmax
// codes plus the offset), with the same roundings, so the GPU gives the CPU loop's numbers bit for bit.
// No torch and no CUDA headers here: nf4_weight.cpp passes raw device pointers.
#pragma once

#include <cstdint>

#include "contract/status.h"
#include "model/cuda_element_type.h"

namespace slipway::model::cuda {

// One NF4 weight's device buffers (model/nf4_weight.h names them). Either absmax, or (double quantization)
// absmax_codes with nested_absmax, nested_quant_map and offset.
struct Nf4DeviceView {
    const uint8_t* packed = nullptr;   // (ceil(n / 2)): element 2k in the high nibble, 2k+1 in the low one
    const float* quant_map = nullptr;  // (16)
    int64_t n = 0;
    int64_t blocksize = 64;                   // even: a byte's two elements share a block
    const float* absmax = nullptr;            // (blocks)
    const uint8_t* absmax_codes = nullptr;    // (blocks)
    const float* nested_absmax = nullptr;     // (ceil(blocks / nested_blocksize))
    const float* nested_quant_map = nullptr;  // (256)
    float offset = 0.0f;
    int64_t nested_blocksize = 256;
};

// Writes the n dequantized values into `out` (a device buffer of n values of `type`) on GPU `device`, on the
// legacy default stream, where LibTorch's kernels run (dist/nccl_communicator.cpp orders itself after it the
// same way). Errors carry CUDA's text.
[[nodiscard]] Status dequantize_nf4(const Nf4DeviceView& w, ElementType type, void* out, int device);

}  // namespace slipway::model::cuda
