// torch_compat.h: on 1.13 on CPU, at::_scaled_dot_product_attention is not fused and returns the weights
// anyway, and its bmm pays a select and an addmm per (batch, head): attention here is a custom autograd
// function whose products are direct BLAS calls (sgemm_, the symbol LibTorch itself imports) over strided
// views, with the mask add and softmax as whole-tensor ATen ops; without that symbol, off CPU or in bf16 it
// is a plain attention with a pre-scaled q and an additive causal mask. torch 2.x has fused kernels behind
// at::scaled_dot_product_attention(is_causal=true).
#include "model/torch_compat.h"

#include <dlfcn.h>

#include <cmath>
#include <limits>
#include <optional>

#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#define SLIPWAY_DEVICE_ALLOCATOR_STATS \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 9))
#if SLIPWAY_DEVICE_ALLOCATOR_STATS
#include <c10/core/CachingDeviceAllocator.h>
#endif

namespace slipway::model {

torch::Tensor attention_mask(int64_t t_q, int64_t t_k, int64_t window, const torch::TensorOptions& options) {
    const bool window_cuts = window > 0 && t_k > window;
#if TORCH_VERSION_MAJOR >= 2
    if (t_q == t_k && !window_cuts) return {};
#endif
    const auto index = torch::TensorOptions().dtype(torch::kInt64).device(options.device());
    const torch::Tensor query = torch::arange(t_k - t_q, t_k, index).unsqueeze(1);  // (Tq, 1) positions
    const torch::Tensor key = torch::arange(t_k, index).unsqueeze(0);               // (1, Tk)
    torch::Tensor hidden = key > query;                                             // (Tq, Tk) bool
    if (window_cuts) hidden = hidden.logical_or(query - key >= window);
    return torch::zeros({t_q, t_k}, options).masked_fill_(hidden, -std::numeric_limits<float>::infinity());
}

torch::Tensor document_attention_mask(const torch::Tensor& documents, int64_t window,
                                      const torch::TensorOptions& options) {
    const int64_t b = documents.size(0), t = documents.size(1);
    const auto index = torch::TensorOptions().dtype(torch::kInt64).device(documents.device());
    const torch::Tensor query = torch::arange(t, index).unsqueeze(1);  // (T, 1)
    const torch::Tensor key = torch::arange(t, index).unsqueeze(0);    // (1, T)
    torch::Tensor hidden = key > query;                                // (T, T) bool
    if (window > 0 && t > window) hidden = hidden.logical_or(query - key >= window);
    hidden = hidden.unsqueeze(0).logical_or(documents.unsqueeze(2) != documents.unsqueeze(1));  // (B, T, T)
    return torch::zeros({b, 1, t, t}, options)
        .masked_fill_(hidden.unsqueeze(1), -std::numeric_limits<float>::infinity());
}

#if TORCH_VERSION_MAJOR < 2
namespace {

// Fortran BLAS sgemm (column-major), resolved at run time from the BLAS LibTorch loaded; null without one.
using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                         const float*, const int*, const float*, const int*, const float*, float*, const int*,
                         size_t, size_t);
SgemmFn sgemm() {
    static const auto fn = reinterpret_cast<SgemmFn>(dlsym(RTLD_DEFAULT, "sgemm_"));
    return fn;
}

// Row-major C (m, n) = alpha op(A) op(B) + beta C, as column-major C^T = op(B)^T op(A)^T.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    const char ta = trans_a ? 'T' : 'N', tb = trans_b ? 'T' : 'N';
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    const int la = static_cast<int>(lda), lb = static_cast<int>(ldb), lc = static_cast<int>(ldc);
    sgemm()(&tb, &ta, &ni, &mi, &ki, &alpha, b, &lb, a, &la, &beta, c, &lc, 1, 1);
}

// The (T, D) matrix of batch b, head h of a (B, H, T, D) tensor whose last dimension is contiguous.
const float* head(const torch::Tensor& x, int64_t b, int64_t h) {
    return x.data_ptr<float>() + b * x.stride(0) + h * x.stride(1);
}
float* head(torch::Tensor& x, int64_t b, int64_t h) {
    return x.data_ptr<float>() + b * x.stride(0) + h * x.stride(1);
}

// Each (T, D) matrix of a (B, H, T, D) tensor is a BLAS matrix: unit stride along D, rows D or more apart.
bool rows_contiguous(const torch::Tensor& x) {
    return x.stride(3) == 1 && x.stride(2) >= x.size(3);
}

// (B, T, H, D) storage seen as (B, H, T, D): the layout the projections produce and consume.
torch::Tensor heads_view(int64_t b, int64_t h, int64_t t, int64_t d, const torch::TensorOptions& options) {
    return torch::empty({b, t, h, d}, options).transpose(1, 2);
}

// softmax(scale q k^T + mask) v with K and V shared by groups of H / Hkv query heads (GQA).
class BlasAttention : public torch::autograd::Function<BlasAttention> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& q,
                                 const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask) {
        const int64_t bs = q.size(0), h = q.size(1), t = q.size(2), d = q.size(3), group = h / k.size(1);
        const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
        torch::Tensor scores = torch::empty({bs, h, t, t}, q.options());  // (B, H, T, T)
        for (int64_t b = 0; b < bs; ++b) {
            for (int64_t i = 0; i < h; ++i) {
                gemm(false, true, t, t, d, scale, head(q, b, i), q.stride(2), head(k, b, i / group),
                     k.stride(2), 0.0f, head(scores, b, i), t);
            }
        }
        scores.add_(mask);
        const torch::Tensor p = torch::softmax(scores, -1);      // (B, H, T, T)
        torch::Tensor y = heads_view(bs, h, t, d, q.options());  // (B, H, T, D) over (B, T, H, D)
        for (int64_t b = 0; b < bs; ++b) {
            for (int64_t i = 0; i < h; ++i) {
                gemm(false, false, t, d, t, 1.0f, head(p, b, i), t, head(v, b, i / group), v.stride(2), 0.0f,
                     head(y, b, i), y.stride(2));
            }
        }
        ctx->save_for_backward({q, k, v, p});
        return y;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &p = saved[3];
        const int64_t bs = q.size(0), h = q.size(1), t = q.size(2), d = q.size(3), kv = k.size(1),
                      group = h / kv;
        const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
        const torch::Tensor dy =
            rows_contiguous(grads[0]) ? grads[0] : grads[0].contiguous();  // (B, H, T, D)
        torch::Tensor dp = torch::empty({bs, h, t, t}, q.options());       // (B, H, T, T)
        torch::Tensor dq = heads_view(bs, h, t, d, q.options());
        torch::Tensor dk = heads_view(bs, kv, t, d, q.options());
        torch::Tensor dv = heads_view(bs, kv, t, d, q.options());
        for (int64_t b = 0; b < bs; ++b) {
            for (int64_t i = 0; i < h; ++i) {
                const float first =
                    i % group == 0 ? 0.0f : 1.0f;  // the group's first head writes, others add
                gemm(false, true, t, t, d, 1.0f, head(dy, b, i), dy.stride(2), head(v, b, i / group),
                     v.stride(2), 0.0f, head(dp, b, i), t);  // dP = dY V^T
                gemm(true, false, t, d, t, 1.0f, head(p, b, i), t, head(dy, b, i), dy.stride(2), first,
                     head(dv, b, i / group), dv.stride(2));  // dV += P^T dY
            }
        }
        const torch::Tensor ds = torch::_softmax_backward_data(dp, p, -1, p.scalar_type());  // (B, H, T, T)
        for (int64_t b = 0; b < bs; ++b) {
            for (int64_t i = 0; i < h; ++i) {
                const float first = i % group == 0 ? 0.0f : 1.0f;
                gemm(false, false, t, d, t, scale, head(ds, b, i), t, head(k, b, i / group), k.stride(2),
                     0.0f, head(dq, b, i), dq.stride(2));  // dQ = scale dS K
                gemm(true, false, t, d, t, scale, head(ds, b, i), t, head(q, b, i), q.stride(2), first,
                     head(dk, b, i / group), dk.stride(2));  // dK += scale dS^T Q
            }
        }
        return {dq, dk, dv, torch::Tensor()};
    }
};

bool blas_attention_fits(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
    if (q.size(1) % k.size(1) != 0 || q.size(2) != k.size(2)) return false;  // (T, T) scores only
    for (const torch::Tensor* x : {&q, &k, &v}) {
        if (!x->device().is_cpu() || x->scalar_type() != torch::kFloat32 || !rows_contiguous(*x))
            return false;
    }
    return sgemm() != nullptr && !at::autocast::is_cpu_enabled();
}

}  // namespace
#endif

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& mask) {
#if TORCH_VERSION_MAJOR >= 2
    const int64_t group = q.size(1) / k.size(1);  // GQA: query head h reads kv head h / group
    // Without a mask the fused kernel's own causal mask (square: Tq == Tk); with one, the mask as given.
    // An undefined tensor is not "no mask" to SDPA: it wants an empty optional (c10::optional: 2.0's type,
    // std::optional's alias since).
    const c10::optional<at::Tensor> attn_mask =
        mask.defined() ? c10::optional<at::Tensor>(mask) : c10::optional<at::Tensor>();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
    // GQA inside the kernel: no (B, H, T, D) copies of k and v, in forward or backward.
    return at::scaled_dot_product_attention(q, k, v, attn_mask, /*dropout_p=*/0.0,
                                            /*is_causal=*/!mask.defined(),
                                            /*scale=*/c10::nullopt, /*enable_gqa=*/group != 1);
#else
    return at::scaled_dot_product_attention(q, group == 1 ? k : k.repeat_interleave(group, 1),
                                            group == 1 ? v : v.repeat_interleave(group, 1), attn_mask,
                                            /*dropout_p=*/0.0, /*is_causal=*/!mask.defined());
#endif
#else
    if (blas_attention_fits(q, k, v)) return BlasAttention::apply(q, k, v, mask);
    const int64_t group = q.size(1) / k.size(1);  // GQA: query head h reads kv head h / group
    const torch::Tensor kx = group == 1 ? k : k.repeat_interleave(group, 1);  // (B, H, T, D)
    const torch::Tensor vx = group == 1 ? v : v.repeat_interleave(group, 1);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
    const torch::Tensor scores = torch::matmul(q * scale, kx.transpose(-2, -1)) + mask;  // (B, H, Tq, Tk)
    // Softmax in fp32, then back to v's dtype, as HF's eager attention does under bf16.
    return torch::matmul(torch::softmax(scores, -1, torch::kFloat32).to(vx.scalar_type()), vx);
#endif
}

std::string attention_backend(int64_t heads, int64_t kv_heads, int64_t t, int64_t head_dim,
                              const torch::TensorOptions& options, int64_t window) {
#if TORCH_VERSION_MAJOR >= 2
    const torch::Tensor q = torch::empty({1, heads, t, head_dim}, options);      // (1, H, T, D)
    const torch::Tensor kv = torch::empty({1, kv_heads, t, head_dim}, options);  // (1, Hkv, T, D)
    const torch::Tensor mask = attention_mask(t, t, window, options);
    const c10::optional<at::Tensor> attn_mask =
        mask.defined() ? c10::optional<at::Tensor>(mask) : c10::optional<at::Tensor>();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
    const int64_t choice = at::_fused_sdp_choice(q, kv, kv, attn_mask, 0.0, !mask.defined(), c10::nullopt,
                                                 /*enable_gqa=*/heads != kv_heads);
    const std::string gqa = heads != kv_heads ? ", GQA in the kernel" : "";
#else
    const torch::Tensor kx = kv.repeat_interleave(heads / kv_heads, 1);
    const int64_t choice = at::_fused_sdp_choice(q, kx, kx, attn_mask, 0.0, !mask.defined(), c10::nullopt);
    const std::string gqa = heads != kv_heads ? ", GQA by repeating k and v" : "";
#endif
    // sdp::SDPBackend's values
    static const char* const names[] = {"math", "flash", "memory-efficient", "cuDNN", "overrideable"};
    const std::string name =
        choice >= 0 && choice < 5 ? names[choice] : "none (" + std::to_string(choice) + ")";
    return "SDPA " + name + gqa;
#else
    (void)heads, (void)kv_heads, (void)t, (void)head_dim, (void)options, (void)window;
    return "BLAS attention (LibTorch 1.x)";
#endif
}

namespace {

// Autocast state per device type (CPU and CUDA); the API moved between 1.13 and 2.4.
bool autocast_enabled(at::DeviceType device) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    return at::autocast::is_autocast_enabled(device);
#else
    return device == at::kCPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

void set_autocast(at::DeviceType device, bool enabled) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_dtype(device, at::kBFloat16);
    at::autocast::set_autocast_enabled(device, enabled);
#else
    if (device == at::kCPU) {
        at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
        at::autocast::set_cpu_enabled(enabled);
    } else {
        at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
        at::autocast::set_enabled(enabled);
    }
#endif
}

}  // namespace

Bf16Autocast::Bf16Autocast(bool enabled, torch::DeviceType device) : enabled_(enabled), device_(device) {
    if (!enabled_) return;
    previous_ = autocast_enabled(device_);
    set_autocast(device_, true);
    at::autocast::increment_nesting();
}

Bf16Autocast::~Bf16Autocast() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();  // drop the bf16 weight copies
    set_autocast(device_, previous_);
}

void release_storage(const torch::Tensor& t) {
    c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
    storage->set_data_ptr_noswap(at::DataPtr(nullptr, t.device()));
    storage->set_nbytes(0);
}

void adopt_storage(const torch::Tensor& target, const torch::Tensor& source) {
    c10::StorageImpl* from = source.storage().unsafeGetStorageImpl();
    c10::StorageImpl* to = target.storage().unsafeGetStorageImpl();
    const size_t nbytes = from->nbytes();
    to->set_data_ptr_noswap(from->set_data_ptr(at::DataPtr(nullptr, source.device())));
    to->set_nbytes(nbytes);
    from->set_nbytes(0);
}

void clear_autocast_cache() {
    at::autocast::clear_cache();
}

bool bf16_autocast_active(torch::DeviceType device) {
    return autocast_enabled(device);
}

NoAutocast::NoAutocast()
    : previous_cpu_(autocast_enabled(at::kCPU)), previous_cuda_(autocast_enabled(at::kCUDA)) {
    set_autocast(at::kCPU, false);
    set_autocast(at::kCUDA, false);
}

NoAutocast::~NoAutocast() {
    set_autocast(at::kCPU, previous_cpu_);
    set_autocast(at::kCUDA, previous_cuda_);
}

torch::Device training_device(bool use_gpus, int64_t local_rank) {
    if (use_gpus && torch::cuda::is_available())
        return torch::Device(torch::kCUDA,
                             static_cast<c10::DeviceIndex>(local_rank % torch::cuda::device_count()));
    return torch::Device(torch::kCPU);
}

void set_torch_threads(int threads) {
    if (threads <= 0) return;
    at::set_num_threads(threads);
    // LibTorch's thread count does not reach a pthreads OpenBLAS (Debian's default): without this a
    // "one thread" run still multiplies matrices on every core, and ranks sharing a node oversubscribe it.
    using SetThreadsFn = void (*)(int);
    static const auto openblas_set =
        reinterpret_cast<SetThreadsFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    if (openblas_set) openblas_set(threads);
}

torch::Tensor cpu_rng_state() {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get_state();
}

void set_cpu_rng_state(const torch::Tensor& state) {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
}

namespace {

// The default generator of GPU `device_index` (created by the CUDA hooks; this TU needs no CUDA headers).
at::Generator cuda_generator(int64_t device_index) {
    return at::globalContext().defaultGenerator(
        c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(device_index)));
}

}  // namespace

torch::Tensor cuda_rng_state(int64_t device_index) {
    at::Generator generator = cuda_generator(device_index);
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get_state();
}

void set_cuda_rng_state(int64_t device_index, const torch::Tensor& state) {
    at::Generator generator = cuda_generator(device_index);
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
}

std::optional<GpuMemoryPeak> gpu_memory_peak(int64_t device_index) {
#if SLIPWAY_DEVICE_ALLOCATOR_STATS
    if (!torch::cuda::is_available()) return std::nullopt;
    auto* allocator = dynamic_cast<c10::DeviceAllocator*>(c10::GetAllocator(c10::kCUDA));
    if (allocator == nullptr) return std::nullopt;
    const c10::CachingDeviceAllocator::DeviceStats stats =
        allocator->getDeviceStats(static_cast<c10::DeviceIndex>(device_index));
    constexpr size_t kAggregate = 0;  // StatType::AGGREGATE: all pools
    return GpuMemoryPeak{stats.allocated_bytes[kAggregate].peak, stats.reserved_bytes[kAggregate].peak};
#else
    (void)device_index;
    return std::nullopt;
#endif
}

}  // namespace slipway::model
