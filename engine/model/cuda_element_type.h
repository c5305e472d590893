// The element types the engine's CUDA kernels read and write (nf4_dequant.cu, fused_kernels.cu), named
// without torch or CUDA headers so the torch side can say which one a raw device pointer holds.
#pragma once

namespace slipway::model::cuda {

enum class ElementType { kFloat32, kBFloat16, kFloat16 };

}  // namespace slipway::model::cuda
