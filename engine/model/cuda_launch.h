// What the torch side hands the engine's CUDA kernels (nf4_dequant.cu, fused_kernels.cu) besides raw
// pointers: the element type a tensor holds, and the stream ATen queues its own work on for that GPU.
#pragma once

#include <optional>

#include <torch/types.h>

#include "model/cuda_element_type.h"

namespace slipway::model {

// The kernels' name for `dtype`, or none where they have no such element type.
std::optional<cuda::ElementType> cuda_element_type(torch::ScalarType dtype);

// ATen's current stream on `device` (a CUDA device) as a cudaStream_t, so a kernel is ordered with the ATen
// work around it. The engine runs on the default stream (null handle); any other current stream is refused,
// since this LibTorch may not expose its handle.
void* current_cuda_stream(const torch::Device& device);

}  // namespace slipway::model
