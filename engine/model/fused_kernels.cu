// fused_kernels_cuda.h: RMSNorm, SwiGLU and RoPE kernels. Memory-bound, so each reads its inputs once and
// writes its outputs once; the element type is a runtime switch (uniform across a launch, so branch-free in
// practice) instead of a template per combination of input, weight and output types.
// RMSNorm: one block per row, block-wide sums by warp shuffles. The weight's gradient: one thread per column
// over a slice of rows (coalesced), fp32 partials summed by the caller. SwiGLU and RoPE: grid-stride loops.
#include "model/fused_kernels_cuda.h"

#include <algorithm>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace slipway::model::cuda {
namespace {

constexpr int kRowThreads = 256;       // RMSNorm: threads per row
constexpr int kElementThreads = 256;   // SwiGLU, RoPE, weight partials
constexpr int64_t kMaxBlocks = 65535;  // grid-stride beyond this
constexpr int64_t kRowsPerChunk = 64;  // RMSNorm weight partials: rows per slice

__device__ __forceinline__ float load(const void* p, ElementType t, int64_t i) {
    switch (t) {
        case ElementType::kBFloat16:
            return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
        case ElementType::kFloat16:
            return __half2float(static_cast<const __half*>(p)[i]);
        default:
            return static_cast<const float*>(p)[i];
    }
}

__device__ __forceinline__ void store(void* p, ElementType t, int64_t i, float v) {
    switch (t) {
        case ElementType::kBFloat16:
            static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
            break;
        case ElementType::kFloat16:
            static_cast<__half*>(p)[i] = __float2half_rn(v);
            break;
        default:
            static_cast<float*>(p)[i] = v;
    }
}

// v as `t` would hold it: where the ATen formula rounds an intermediate, so does the kernel.
__device__ __forceinline__ float round_to(float v, ElementType t) {
    switch (t) {
        case ElementType::kBFloat16:
            return __bfloat162float(__float2bfloat16_rn(v));
        case ElementType::kFloat16:
            return __half2float(__float2half_rn(v));
        default:
            return v;
    }
}

// The sum of v over the block, returned to every thread. `shared` holds one float per warp; the leading
// __syncthreads lets a loop reuse it.
__device__ float block_sum(float v, float* shared) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = (blockDim.x + 31) / 32;
    __syncthreads();
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = lane < warps ? shared[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void rms_norm_forward_kernel(RmsNormForward a) {
    __shared__ float shared[32];
    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        const int64_t base = row * a.cols;
        float squares = 0.0f;
        for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
            float h = load(a.x, a.x_type, base + c);
            if (a.delta != nullptr) {
                h = round_to(h + load(a.delta, a.delta_type, base + c), a.x_type);
                store(a.sum, a.x_type, base + c, h);
            }
            squares += h * h;
        }
        const float rstd = rsqrtf(block_sum(squares, shared) / static_cast<float>(a.cols) + a.eps);
        if (threadIdx.x == 0) a.rstd[row] = rstd;
        const void* h_source = a.delta != nullptr ? a.sum : a.x;  // this thread's own writes above
        for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
            const float x_hat = round_to(load(h_source, a.x_type, base + c) * rstd, a.x_type);
            store(a.y, a.y_type, base + c, load(a.weight, a.weight_type, c) * x_hat);
        }
    }
}

__global__ void rms_norm_backward_kernel(RmsNormBackward a) {
    __shared__ float shared[32];
    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        const int64_t base = row * a.cols;
        const float rstd = a.rstd[row];
        float dot = 0.0f;
        for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
            const float x_hat = load(a.x, a.x_type, base + c) * rstd;
            const float wg =
                round_to(load(a.grad_y, a.y_type, base + c) * load(a.weight, a.weight_type, c), a.y_type);
            dot += wg * x_hat;
        }
        const float mean = block_sum(dot, shared) / static_cast<float>(a.cols);
        for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
            const float x_hat = load(a.x, a.x_type, base + c) * rstd;
            const float wg =
                round_to(load(a.grad_y, a.y_type, base + c) * load(a.weight, a.weight_type, c), a.y_type);
            float dx = round_to((wg - x_hat * mean) * rstd, a.x_type);
            if (a.grad_sum != nullptr) dx += load(a.grad_sum, a.x_type, base + c);
            store(a.grad_x, a.x_type, base + c, dx);
        }
    }
}

// partials[chunk, c] = sum over the chunk's rows of round_y(g * round_x(h rstd)).
__global__ void rms_norm_weight_kernel(RmsNormBackward a) {
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= a.cols) return;
    for (int64_t chunk = blockIdx.y; chunk < a.chunks; chunk += gridDim.y) {
        const int64_t end = (chunk + 1) * kRowsPerChunk < a.rows ? (chunk + 1) * kRowsPerChunk : a.rows;
        float acc = 0.0f;
        for (int64_t row = chunk * kRowsPerChunk; row < end; ++row) {
            const int64_t i = row * a.cols + c;
            const float x_hat = round_to(load(a.x, a.x_type, i) * a.rstd[row], a.x_type);
            acc += round_to(load(a.grad_y, a.y_type, i) * x_hat, a.y_type);
        }
        a.weight_partials[chunk * a.cols + c] = acc;
    }
}

// ATen's silu: x / (1 + exp(-x)) in fp32.
__device__ __forceinline__ float silu(float x) {
    return x / (1.0f + expf(-x));
}

__global__ void swiglu_forward_kernel(const void* gate_up, void* out, ElementType t, int64_t rows,
                                      int64_t inter) {
    const int64_t n = rows * inter, stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
        const int64_t row = k / inter, i = k - row * inter, in = row * 2 * inter + i;
        const float gate = load(gate_up, t, in), up = load(gate_up, t, in + inter);
        store(out, t, k, round_to(silu(gate), t) * up);
    }
}

// d_up = g silu(a); d_gate = g up s (1 + a (1 - s)), s = sigmoid(a): fp32, rounded once each.
__global__ void swiglu_backward_kernel(const void* grad, const void* gate_up, void* grad_gate_up,
                                       ElementType t, int64_t rows, int64_t inter) {
    const int64_t n = rows * inter, stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
        const int64_t row = k / inter, i = k - row * inter, in = row * 2 * inter + i;
        const float g = load(grad, t, k), a = load(gate_up, t, in), up = load(gate_up, t, in + inter);
        const float s = 1.0f / (1.0f + expf(-a));
        store(grad_gate_up, t, in, g * up * s * (1.0f + a * (1.0f - s)));
        store(grad_gate_up, t, in + inter, g * (a * s));
    }
}

// One thread per (token, head, j < D/2) pair (x1 = x[j], x2 = x[j + D/2]). Forward:
// y1 = x1 c1 - x2 s1, y2 = x2 c2 + x1 s2; backward: d1 = g1 c1 + g2 s2, d2 = g2 c2 - g1 s1. Products and sums
// rounded one at a time (no FMA contraction), as ATen's separate ops round them.
__global__ void rope_kernel(RopeArgs a, const void* in, void* out, int64_t out_stride, bool backward) {
    const int64_t half = a.head_dim / 2, n = a.tokens * a.heads * half;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
        const int64_t token = k / (a.heads * half), rest = k - token * a.heads * half;
        const int64_t head = rest / half, j = rest - head * half;
        const int64_t i = token * a.token_stride + head * a.head_dim + j;
        const int64_t o = token * out_stride + head * a.head_dim + j;
        const float x1 = load(in, a.type, i), x2 = load(in, a.type, i + half);
        if (head >= a.rotated_heads) {
            if (out != in) store(out, a.type, o, x1), store(out, a.type, o + half, x2);
            continue;
        }
        const int64_t row = (token % a.t) * a.head_dim + j;
        const float c1 = load(a.cos, a.table_type, row), c2 = load(a.cos, a.table_type, row + half);
        const float s1 = load(a.sin, a.table_type, row), s2 = load(a.sin, a.table_type, row + half);
        float y1, y2;
        if (!backward) {
            y1 = __fadd_rn(__fmul_rn(x1, c1), -__fmul_rn(x2, s1));
            y2 = __fadd_rn(__fmul_rn(x2, c2), __fmul_rn(x1, s2));
        } else {
            y1 = __fadd_rn(__fmul_rn(x1, c1), __fmul_rn(x2, s2));
            y2 = __fadd_rn(__fmul_rn(x2, c2), -__fmul_rn(x1, s1));
        }
        store(out, a.type, o, y1);
        store(out, a.type, o + half, y2);
    }
}

unsigned element_blocks(int64_t n) {
    return static_cast<unsigned>(
        std::clamp<int64_t>((n + kElementThreads - 1) / kElementThreads, 1, kMaxBlocks));
}

Status launched(const char* what) {
    const cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return Status::Ok();
    return Status::Error(std::string(what) + " kernel: " + cudaGetErrorString(e));
}

cudaStream_t as_stream(void* stream) {
    return static_cast<cudaStream_t>(stream);
}

}  // namespace

int64_t rms_norm_weight_chunks(int64_t rows) {
    return std::max<int64_t>(1, (rows + kRowsPerChunk - 1) / kRowsPerChunk);
}

Status rms_norm_forward(const RmsNormForward& a, void* stream) {
    if (a.rows == 0) return Status::Ok();
    const auto blocks = static_cast<unsigned>(std::min(a.rows, kMaxBlocks));
    rms_norm_forward_kernel<<<blocks, kRowThreads, 0, as_stream(stream)>>>(a);
    return launched("RMSNorm forward");
}

Status rms_norm_backward(const RmsNormBackward& a, void* stream) {
    if (a.rows == 0) return Status::Ok();
    const auto blocks = static_cast<unsigned>(std::min(a.rows, kMaxBlocks));
    rms_norm_backward_kernel<<<blocks, kRowThreads, 0, as_stream(stream)>>>(a);
    if (Status s = launched("RMSNorm backward"); !s.ok()) return s;
    if (a.weight_partials == nullptr) return Status::Ok();
    const dim3 grid(static_cast<unsigned>((a.cols + kElementThreads - 1) / kElementThreads),
                    static_cast<unsigned>(std::min(a.chunks, kMaxBlocks)));
    rms_norm_weight_kernel<<<grid, kElementThreads, 0, as_stream(stream)>>>(a);
    return launched("RMSNorm weight gradient");
}

Status swiglu_forward(const void* gate_up, void* out, ElementType type, int64_t rows, int64_t inter,
                      void* stream) {
    if (rows * inter == 0) return Status::Ok();
    swiglu_forward_kernel<<<element_blocks(rows * inter), kElementThreads, 0, as_stream(stream)>>>(
        gate_up, out, type, rows, inter);
    return launched("SwiGLU forward");
}

Status swiglu_backward(const void* grad, const void* gate_up, void* grad_gate_up, ElementType type,
                       int64_t rows, int64_t inter, void* stream) {
    if (rows * inter == 0) return Status::Ok();
    swiglu_backward_kernel<<<element_blocks(rows * inter), kElementThreads, 0, as_stream(stream)>>>(
        grad, gate_up, grad_gate_up, type, rows, inter);
    return launched("SwiGLU backward");
}

Status rope_forward_in_place(const RopeArgs& a, void* x, void* stream) {
    if (a.head_dim % 2 != 0) return Status::Error("RoPE: odd head dimension " + std::to_string(a.head_dim));
    const int64_t pairs = a.tokens * a.rotated_heads * (a.head_dim / 2);
    if (pairs == 0) return Status::Ok();
    RopeArgs rotated = a;
    rotated.heads = a.rotated_heads;  // in place: the other heads stay as they are
    rope_kernel<<<element_blocks(pairs), kElementThreads, 0, as_stream(stream)>>>(rotated, x, x,
                                                                                  a.token_stride,
                                                                                  /*backward=*/false);
    return launched("RoPE forward");
}

Status rope_backward(const RopeArgs& a, const void* grad, void* grad_x, void* stream) {
    if (a.head_dim % 2 != 0) return Status::Error("RoPE: odd head dimension " + std::to_string(a.head_dim));
    const int64_t pairs = a.tokens * a.heads * (a.head_dim / 2);
    if (pairs == 0) return Status::Ok();
    rope_kernel<<<element_blocks(pairs), kElementThreads, 0, as_stream(stream)>>>(a, grad, grad_x,
                                                                                  a.token_stride,
                                                                                  /*backward=*/true);
    return launched("RoPE backward");
}

}  // namespace slipway::model::cuda
