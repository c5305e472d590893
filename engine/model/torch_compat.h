// The one place for LibTorch calls whose name or signature differs between Debian's 1.13 and the NGC
// image's 2.x: scaled-dot-product attention, thread settings, autocast, RNG states and GPU memory figures.
#pragma once

#include <optional>
#include <string>

#include <torch/types.h>

namespace slipway::model {

// The additive mask (Tq, Tk) that causal_attention takes, for Tq queries that are the last Tq of Tk
// positions (a KV cache holds the first Tk - Tq): query i sees key j when j <= i + Tk - Tq and, with a
// sliding window W > 0, i + Tk - Tq - j < W (HF's sliding_window); 0 where seen, -inf elsewhere.
// Undefined where the fused causal kernel needs none (torch 2.x, Tq == Tk and no window that cuts).
torch::Tensor attention_mask(int64_t t_q, int64_t t_k, int64_t window, const torch::TensorOptions& options);

// The same for rows that hold several documents (packed conversations): documents (B, T) int64 numbers each
// token's document; query i sees key j when both are in one document, j <= i, and within the window.
// Returns (B, 1, T, T), always defined.
torch::Tensor document_attention_mask(const torch::Tensor& documents, int64_t window,
                                      const torch::TensorOptions& options);

// Causal self-attention. q: (B, H, Tq, D), k and v: (B, Hkv, Tk, D) with Hkv dividing H (GQA: query head h
// reads kv head h / (H / Hkv)), mask from attention_mask(Tq, Tk, ...). Returns (B, H, Tq, D), on CPU in fp32
// a view of (B, Tq, H, D) storage (so the caller's transpose back is free).
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& mask);

// Which attention kernel causal_attention gets for these shapes and options (dtype, device), in words,
// e.g. "SDPA flash, GQA in the kernel": logged once per run.
std::string attention_backend(int64_t heads, int64_t kv_heads, int64_t t, int64_t head_dim,
                              const torch::TensorOptions& options, int64_t window);
// Intra-op threads of this process (LibTorch starts at 1 here).
void set_torch_threads(int threads);

// bf16 autocast on the training device (CPU or CUDA) for the scope of the object (fp32 master weights stay
// as they are; matmuls run in bf16). The API moved between 1.13 and 2.x. Disabled when `enabled` is false.
class Bf16Autocast {
public:
    explicit Bf16Autocast(bool enabled, torch::DeviceType device = torch::kCPU);
    ~Bf16Autocast();
    Bf16Autocast(const Bf16Autocast&) = delete;
    Bf16Autocast& operator=(const Bf16Autocast&) = delete;

private:
    bool enabled_;
    torch::DeviceType device_;
    bool previous_ = false;
};

// Whether bf16 autocast is on for `device` here (a recomputation in backward must run as its forward did).
bool bf16_autocast_active(torch::DeviceType device);

// Turns autocast off for the scope (e.g. the fp32 loss inside an autocast region).
class NoAutocast {
public:
    NoAutocast();
    ~NoAutocast();
    NoAutocast(const NoAutocast&) = delete;
    NoAutocast& operator=(const NoAutocast&) = delete;

private:
    bool previous_cpu_, previous_cuda_;
};

// Where a rank trains: its GPU (cuda:local_rank) when GPUs are wanted and this LibTorch sees one, else CPU.
torch::Device training_device(bool use_gpus, int64_t local_rank);

// Storage that outlives its bytes, for sharded training: a unit's gathered buffer keeps its tensor (and
// every view of it that autograd saved) while its bytes are given back between uses.
// Frees the bytes of `t`'s storage; t and its views keep their shapes and must not be read until refilled.
void release_storage(const torch::Tensor& t);
// Moves the allocation of `source` (contiguous, same dtype, device and byte size) into `target`'s storage:
// no copy, and no version-counter bump that would invalidate tensors autograd saved. `source` is left empty.
void adopt_storage(const torch::Tensor& target, const torch::Tensor& source);
// Drops the bf16 copies autocast caches of fp32 leaf weights (sharded units free their weights after use).
void clear_autocast_cache();

// The CPU generator's state (uint8 bytes) and its restore: dropout and init draw from it.
torch::Tensor cpu_rng_state();
void set_cpu_rng_state(const torch::Tensor& state);

// The CUDA generator's state of GPU `device_index` (uint8 bytes; dropout on that GPU draws from it) and its
// restore. Only called where this LibTorch sees that GPU.
torch::Tensor cuda_rng_state(int64_t device_index);
void set_cuda_rng_state(int64_t device_index, const torch::Tensor& state);

// Peak bytes of GPU `device_index` that the caching allocator handed out (torch.cuda.max_memory_allocated)
// and held from the driver (max_memory_reserved) since the process started. Empty where this LibTorch
// cannot tell (CPU builds, and 2.x before the device-generic allocator statistics of 2.9).
struct GpuMemoryPeak {
    int64_t allocated_bytes = 0;
    int64_t reserved_bytes = 0;
};
std::optional<GpuMemoryPeak> gpu_memory_peak(int64_t device_index);

}  // namespace slipway::model
