// nf4_dequant_cuda.h: the NF4 dequantization kernel. One thread per packed byte (two weights of one block),
// grid-stride; the 16 code values in shared memory. Products and sums are rounded one at a time
// (__fmul_rn, __fadd_rn): nvcc would otherwise contract them into FMAs and the last bit would differ from
// bitsandbytes and from the CPU loop.
#include "model/nf4_dequant_cuda.h"

#include <algorithm>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace slipway::model::cuda {
namespace {

template <typename T>
__device__ T from_float(float v);
template <>
__device__ float from_float<float>(float v) {
    return v;
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}
template <>
__device__ __half from_float<__half>(float v) {
    return __float2half_rn(v);
}

// A block's absmax; with double quantization the code value times its nested block's absmax, then the offset
// (bitsandbytes dequantizes the absmax codes in one kernel and adds the offset in another: two roundings).
__device__ float block_scale(const Nf4DeviceView& w, int64_t block) {
    if (w.absmax != nullptr) return w.absmax[block];
    const float nested = w.nested_absmax[block / w.nested_blocksize];
    return __fadd_rn(__fmul_rn(w.nested_quant_map[w.absmax_codes[block]], nested), w.offset);
}

template <typename T>
__global__ void dequantize_nf4_kernel(Nf4DeviceView w, T* out) {
    __shared__ float code[16];
    if (threadIdx.x < 16) code[threadIdx.x] = w.quant_map[threadIdx.x];
    __syncthreads();
    const int64_t bytes = (w.n + 1) / 2;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes; i += stride) {
        const int64_t k = 2 * i;
        const uint8_t byte = w.packed[i];
        const float scale = block_scale(w, k / w.blocksize);
        out[k] = from_float<T>(__fmul_rn(code[byte >> 4], scale));
        if (k + 1 < w.n) out[k + 1] = from_float<T>(__fmul_rn(code[byte & 0x0F], scale));
    }
}

template <typename T>
void launch(const Nf4DeviceView& w, void* out) {
    constexpr int kThreads = 256;
    const int64_t bytes = (w.n + 1) / 2;
    const auto blocks = static_cast<unsigned>(std::min<int64_t>((bytes + kThreads - 1) / kThreads, 65535));
    dequantize_nf4_kernel<T><<<blocks, kThreads, 0, nullptr>>>(w, static_cast<T*>(out));
}

}  // namespace

Status dequantize_nf4(const Nf4DeviceView& w, ElementType type, void* out, int device) {
    if (w.n <= 0) return Status::Ok();
    if (w.blocksize <= 0 || w.blocksize % 2 != 0)
        return Status::Error("NF4 dequantization: the block size must be even, got " +
                             std::to_string(w.blocksize));
    int previous = 0;
    if (cudaError_t e = cudaGetDevice(&previous); e != cudaSuccess)
        return Status::Error(std::string("cudaGetDevice: ") + cudaGetErrorString(e));
    if (previous != device) {
        if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
            return Status::Error(std::string("cudaSetDevice: ") + cudaGetErrorString(e));
    }
    switch (type) {
        case ElementType::kFloat32:
            launch<float>(w, out);
            break;
        case ElementType::kBFloat16:
            launch<__nv_bfloat16>(w, out);
            break;
        case ElementType::kFloat16:
            launch<__half>(w, out);
            break;
    }
    const cudaError_t launched = cudaGetLastError();
    if (previous != device) cudaSetDevice(previous);
    if (launched != cudaSuccess)
        return Status::Error(std::string("NF4 dequantization kernel: ") + cudaGetErrorString(launched));
    return Status::Ok();
}

}  // namespace slipway::model::cuda
