// nf4_weight.h: NF4 weights as tensors (quantized through engine/quant), their dequantization with ATen ops
// (on the weight's device), and the matmul whose backward dequantizes again instead of keeping W.
#include "model/nf4_weight.h"

#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include <ATen/Parallel.h>

#include "model/torch_compat.h"
#include "quant/nf4.h"
#ifdef SLIPWAY_WITH_NF4_CUDA
#include "model/cuda_launch.h"
#include "model/nf4_dequant_cuda.h"
#endif

namespace slipway::model {
namespace {

torch::Tensor float_tensor(const float* data, int64_t n) {
    return torch::from_blob(const_cast<float*>(data), {n}, torch::kFloat32).clone();
}

// x W^T with W rebuilt from its NF4 form in forward and in backward: autograd keeps no (out, in) copy.
class Nf4Matmul : public torch::autograd::Function<Nf4Matmul> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 const std::shared_ptr<const Nf4Weight>& w, torch::ScalarType compute) {
        ctx->saved_data["weight"] =
            reinterpret_cast<int64_t>(w.get());                      // owned by the Linear, which outlives
        ctx->saved_data["compute"] = static_cast<int64_t>(compute);  // this step's backward
        ctx->saved_data["dtype"] = static_cast<int64_t>(x.scalar_type());
        const torch::Tensor weight = w->dequantize(compute);  // (out, in)
        // Under bf16 autocast, the product stays in bf16, as a Linear's would: casting it back to an fp32
        // stream's dtype (what bitsandbytes does) costs a pass and doubles what the next ops save.
        const bool autocast = compute == torch::kBFloat16 && bf16_autocast_active(x.device().type());
        return torch::matmul(x.to(compute), weight.t()).to(autocast ? compute : x.scalar_type());  // (..., out)
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto* w = reinterpret_cast<const Nf4Weight*>(ctx->saved_data["weight"].toInt());
        const auto compute = static_cast<torch::ScalarType>(ctx->saved_data["compute"].toInt());
        const auto dtype = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
        const torch::Tensor dx = torch::matmul(grads[0].to(compute), w->dequantize(compute));  // (..., in)
        return {dx.to(dtype), torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

torch::Tensor Nf4Weight::block_absmax() const {
    if (!double_quantized()) return absmax;
    const int64_t blocks = absmax_codes.size(0);
    // dequantize_blockwise of the codes (code value x its block's absmax, fp32), then + offset.
    const torch::Tensor scales =
        nested_absmax.repeat_interleave(nested_blocksize).narrow(0, 0, blocks);  // (blocks)
    return nested_quant_map.index_select(0, absmax_codes.to(torch::kInt64)) * scales + offset;
}

namespace {

#ifdef SLIPWAY_WITH_NF4_CUDA
// The kernel of nf4_dequant.cu on w's GPU: the (out, in) result is its only allocation, written in `dtype`
// where the kernel has it (fp32, bf16, fp16), else in fp32 and cast.
torch::Tensor dequantize_on_gpu(const Nf4Weight& w, torch::ScalarType dtype) {
    const bool direct = dtype == torch::kFloat32 || dtype == torch::kBFloat16 || dtype == torch::kHalf;
    const cuda::ElementType type = cuda_element_type(direct ? dtype : torch::kFloat32).value();
    torch::Tensor out = torch::empty({w.out_features, w.in_features},
                                     w.packed.options().dtype(direct ? dtype : torch::kFloat32));
    const torch::Tensor packed = w.packed.contiguous(), quant_map = w.quant_map.contiguous();
    cuda::Nf4DeviceView view;
    view.packed = packed.data_ptr<uint8_t>();
    view.quant_map = quant_map.data_ptr<float>();
    view.n = out.numel();
    view.blocksize = w.blocksize;
    // Contiguous copies (if any) may be freed once the kernel is queued: the caching allocator reuses them
    // only for work queued after it on the same stream.
    torch::Tensor absmax, codes, nested, nested_map;
    if (w.double_quantized()) {
        codes = w.absmax_codes.contiguous();
        nested = w.nested_absmax.contiguous();
        nested_map = w.nested_quant_map.contiguous();
        view.absmax_codes = codes.data_ptr<uint8_t>();
        view.nested_absmax = nested.data_ptr<float>();
        view.nested_quant_map = nested_map.data_ptr<float>();
        view.offset = w.offset;
        view.nested_blocksize = w.nested_blocksize;
    } else {
        absmax = w.absmax.contiguous();
        view.absmax = absmax.data_ptr<float>();
    }
    const Status launched = cuda::dequantize_nf4(view, type, out.data_ptr(), w.packed.device().index());
    TORCH_CHECK(launched.ok(), launched.message());
    return direct ? out : out.to(dtype);
}
#endif

}  // namespace

torch::Tensor Nf4Weight::dequantize(torch::ScalarType dtype) const {
    torch::NoGradGuard no_grad;
    const int64_t n = out_features * in_features;
#ifdef SLIPWAY_WITH_NF4_CUDA
    if (packed.is_cuda()) return dequantize_on_gpu(*this, dtype);
#endif
    const torch::Tensor scales = block_absmax().contiguous();  // (blocks) fp32
    if (packed.device().is_cpu()) {
        // A plain loop: the (out, in) result is the only allocation (ATen ops would add 5 temporaries of n).
        torch::Tensor out = torch::empty({out_features, in_features}, torch::kFloat32);
        const uint8_t* codes = packed.data_ptr<uint8_t>();
        const float* map = quant_map.data_ptr<float>();
        const float* absmax_of = scales.data_ptr<float>();
        float* o = out.data_ptr<float>();
        const int64_t bs = blocksize;
        at::parallel_for(0, (n + bs - 1) / bs, 16, [&](int64_t first, int64_t last) {
            for (int64_t b = first; b < last; ++b) {
                const float scale = absmax_of[b];
                for (int64_t k = b * bs, end = std::min(n, k + bs); k < end; ++k) {
                    const uint8_t byte = codes[k / 2];
                    o[k] = map[k % 2 == 0 ? byte >> 4 : byte & 0x0F] * scale;
                }
            }
        });
        return dtype == torch::kFloat32 ? out : out.to(dtype);
    }
    // Built without CUDA (or another device): ATen ops. (ceil(n/2), 2) nibbles, high first -> (n)
    const torch::Tensor nibbles =
        torch::stack({packed.__rshift__(4), packed.__and__(0x0F)}, 1).view({-1}).narrow(0, 0, n);
    const torch::Tensor values = quant_map.index_select(0, nibbles.to(torch::kInt64));  // (n) fp32
    return (values * scales.repeat_interleave(blocksize).narrow(0, 0, n))
        .view({out_features, in_features})
        .to(dtype);
}

int64_t Nf4Weight::resident_bytes() const {
    int64_t bytes = 0;
    for (const torch::Tensor* t :
         {&packed, &quant_map, &absmax, &absmax_codes, &nested_absmax, &nested_quant_map}) {
        if (t->defined()) bytes += t->numel() * static_cast<int64_t>(t->element_size());
    }
    return bytes;
}

Nf4Weight Nf4Weight::to(const torch::Device& device) const {
    Nf4Weight moved = *this;
    for (torch::Tensor* t : {&moved.packed, &moved.quant_map, &moved.absmax, &moved.absmax_codes,
                             &moved.nested_absmax, &moved.nested_quant_map}) {
        if (t->defined()) *t = t->to(device);
    }
    return moved;
}

Result<Nf4Weight> quantize_nf4_weight(const torch::Tensor& w, bool double_quant, int64_t blocksize) {
    if (w.dim() != 2) return Status::Error("quantize_nf4_weight: a weight must be (out, in)");
    Nf4Weight q;
    q.out_features = w.size(0);
    q.in_features = w.size(1);
    q.blocksize = blocksize;
    q.original_dtype = w.scalar_type();
    const torch::Tensor x = w.detach().to(torch::kCPU, torch::kFloat32).contiguous().view({-1});  // (n)
    Result<quant::Nf4Tensor> t =
        quant::quantize_nf4(x.data_ptr<float>(), static_cast<size_t>(x.numel()), static_cast<int>(blocksize));
    if (!t.ok()) return t.status();
    const auto as_bytes = torch::TensorOptions().dtype(torch::kUInt8);
    q.packed = torch::from_blob(t->packed.data(), {static_cast<int64_t>(t->packed.size())}, as_bytes).clone();
    q.quant_map = float_tensor(quant::kNf4Codes.data(), 16);
    if (!double_quant) {
        q.absmax = float_tensor(t->absmax.data(), static_cast<int64_t>(t->absmax.size()));
    } else {
        Result<quant::DoubleQuantized> dq = quant::double_quantize_absmax(t->absmax);
        if (!dq.ok()) return dq.status();
        q.absmax_codes =
            torch::from_blob(dq->codes.data(), {static_cast<int64_t>(dq->codes.size())}, as_bytes).clone();
        q.nested_absmax =
            float_tensor(dq->nested_absmax.data(), static_cast<int64_t>(dq->nested_absmax.size()));
        q.nested_quant_map = float_tensor(dq->nested_quant_map.data(), 256);
        q.offset = dq->offset;
        q.nested_blocksize = dq->nested_blocksize;
    }
    return w.device().is_cpu() ? q : q.to(w.device());
}

torch::Tensor nf4_linear(const torch::Tensor& x, const std::shared_ptr<const Nf4Weight>& w,
                         torch::ScalarType compute_dtype) {
    return Nf4Matmul::apply(x, w, compute_dtype);
}

}  // namespace slipway::model
