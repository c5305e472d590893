// The GPU path's fused RMSNorm (alone and after the residual add), SwiGLU and RoPE (model/fused_ops.h)
// against the op-by-op formulas they replace (autograd's own gradients), forward and backward: on the CPU
// their ATen form, on a GPU the CUDA kernels (fused_kernels.cu). fp32 to rounding, bf16 to a few bf16 steps;
// odd sizes and rows longer than a block's threads included. The tests/gpu `kernels` check runs the CUDA
// cases.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include <torch/torch.h>

#include "model/fused_ops.h"

namespace slipway::model {
namespace {

torch::Tensor reference_rms_norm(const torch::Tensor& x, const torch::Tensor& w, double eps) {
    const torch::Tensor x32 = x.to(torch::kFloat32);
    return w * (x32 * torch::rsqrt(x32.pow(2).mean(-1, true) + eps)).to(x.scalar_type());
}

torch::Tensor reference_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
    const std::vector<torch::Tensor> h = x.chunk(2, -1);
    return x * cos.unsqueeze(1) + torch::cat({-h[1], h[0]}, -1) * sin.unsqueeze(1);
}

// Largest |a - b| over the largest |b|.
double relative(const torch::Tensor& a, const torch::Tensor& b) {
    const torch::Tensor a64 = a.to(torch::kFloat64), b64 = b.to(torch::kFloat64);
    return (a64 - b64).abs().max().item<double>() / std::max(b64.abs().max().item<double>(), 1e-30);
}

struct Case {
    torch::ScalarType dtype;
    double tolerance;
    torch::DeviceType device;
};
void PrintTo(const Case& c, std::ostream* os) {
    *os << c10::toString(c.dtype) << " on " << c10::DeviceTypeName(c.device) << ", tolerance " << c.tolerance;
}

class FusedOps : public testing::TestWithParam<Case> {
protected:
    void SetUp() override {
        if (GetParam().device == torch::kCUDA && !torch::cuda::is_available())
            GTEST_SKIP() << "no CUDA device visible to LibTorch";
    }
    torch::Device device() const { return torch::Device(GetParam().device); }
    bool kernels() const { return cuda_kernels_enabled(device()); }
};

TEST_P(FusedOps, RmsNormEqualsTheOpByOpPath) {
    const torch::ScalarType dtype = GetParam().dtype;
    const double tol = GetParam().tolerance;
    const torch::TensorOptions on = torch::TensorOptions().device(device());
    torch::manual_seed(1);
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{2, 7, 33}, std::vector<int64_t>{3, 5, 256}, std::vector<int64_t>{67, 1031}}) {
        // fp32 weights (an fp32 base) and weights in x's dtype (a bf16 base)
        for (const torch::ScalarType weight_dtype : {torch::kFloat32, dtype}) {
            SCOPED_TRACE(testing::Message() << "shape " << torch::IntArrayRef(shape) << ", weight "
                                            << c10::toString(weight_dtype));
            const torch::Tensor x0 = torch::randn(shape, on).to(dtype);
            const torch::Tensor w0 = (torch::rand({shape.back()}, on) + 0.5).to(weight_dtype);
            const torch::Tensor g = torch::randn(shape, on);
            torch::Tensor xa = x0.clone().requires_grad_(), wa = w0.clone().requires_grad_();
            torch::Tensor xb = x0.clone().requires_grad_(), wb = w0.clone().requires_grad_();
            const torch::Tensor ya = fused_rms_norm(xa, wa, 1e-5), yb = reference_rms_norm(xb, wb, 1e-5);
            EXPECT_EQ(ya.scalar_type(), yb.scalar_type());
            if (kernels()) {  // one rounding step where the kernel's sum of squares is ordered differently
                EXPECT_LE(relative(ya, yb), tol) << "forward";
            } else {
                EXPECT_TRUE(torch::equal(ya, yb)) << "forward: the same ops";
            }
            (ya * g).sum().backward();
            (yb * g).sum().backward();
            EXPECT_LE(relative(xa.grad(), xb.grad()), tol);
            EXPECT_EQ(wa.grad().scalar_type(), weight_dtype);
            EXPECT_LE(relative(wa.grad(), wb.grad()), tol);
        }
    }
}

// h = x + delta and RMSNorm(h) as one step, with the gradient reaching h both directly (the next residual)
// and through the norm. delta in x's dtype, or bf16 into an fp32 residual stream (autocast over an fp32
// base).
TEST_P(FusedOps, AddRmsNormEqualsTheOpByOpPath) {
    const torch::ScalarType dtype = GetParam().dtype;
    const double tol = GetParam().tolerance;
    const torch::TensorOptions on = torch::TensorOptions().device(device());
    torch::manual_seed(4);
    for (const torch::ScalarType delta_dtype : {dtype, torch::kBFloat16}) {
        SCOPED_TRACE(testing::Message() << "delta " << c10::toString(delta_dtype));
        const std::vector<int64_t> shape{3, 7, 515};
        const torch::Tensor x0 = torch::randn(shape, on).to(dtype),
                            d0 = torch::randn(shape, on).to(delta_dtype);
        const torch::Tensor w0 = torch::rand({shape.back()}, on) + 0.5;
        const torch::Tensor g_h = torch::randn(shape, on), g_y = torch::randn(shape, on);
        torch::Tensor xa = x0.clone().requires_grad_(), da = d0.clone().requires_grad_(),
                      wa = w0.clone().requires_grad_();
        torch::Tensor xb = x0.clone().requires_grad_(), db = d0.clone().requires_grad_(),
                      wb = w0.clone().requires_grad_();
        const auto [ha, ya] = fused_add_rms_norm(xa, da, wa, 1e-5);
        const torch::Tensor hb = xb + db, yb = reference_rms_norm(hb, wb, 1e-5);
        EXPECT_EQ(ha.scalar_type(), hb.scalar_type());
        EXPECT_TRUE(torch::equal(ha, hb)) << "the sum: one rounding either way";
        EXPECT_LE(relative(ya, yb), kernels() ? tol : 0.0);
        (ha * g_h + ya * g_y).sum().backward();
        (hb * g_h + yb * g_y).sum().backward();
        EXPECT_EQ(da.grad().scalar_type(), delta_dtype);
        EXPECT_LE(relative(xa.grad(), xb.grad()), tol);
        EXPECT_LE(relative(da.grad(), db.grad()), tol);
        EXPECT_LE(relative(wa.grad(), wb.grad()), tol);
    }
}

TEST_P(FusedOps, SwigluEqualsTheOpByOpPath) {
    const torch::ScalarType dtype = GetParam().dtype;
    const double tol = GetParam().tolerance;
    const torch::TensorOptions on = torch::TensorOptions().device(device());
    torch::manual_seed(2);
    const torch::Tensor gate_up0 =
        torch::cat({torch::randn({3, 5, 47}, on) * 3, torch::randn({3, 5, 47}, on)}, -1)
            .to(dtype);  // (3, 5, 2 x 47)
    const torch::Tensor g = torch::randn({3, 5, 47}, on).to(dtype);
    torch::Tensor a = gate_up0.clone().requires_grad_(), b = gate_up0.clone().requires_grad_();
    const std::vector<torch::Tensor> gb = b.split(47, -1);
    const torch::Tensor ya = fused_swiglu_packed(a), yb = torch::silu(gb[0]) * gb[1];
    EXPECT_LE(relative(ya, yb), kernels() ? tol : 0.0) << "the same roundings (the kernel's exp may differ)";
    (ya * g).sum().backward();
    (yb * g).sum().backward();
    EXPECT_LE(relative(a.grad().narrow(-1, 0, 47), b.grad().narrow(-1, 0, 47)), tol) << "gate";
    EXPECT_LE(relative(a.grad().narrow(-1, 47, 47), b.grad().narrow(-1, 47, 47)), tol) << "up";
}

TEST_P(FusedOps, RopeEqualsTheOpByOpPath) {
    const torch::ScalarType dtype = GetParam().dtype;
    const double tol = GetParam().tolerance;
    const torch::TensorOptions on = torch::TensorOptions().device(device());
    torch::manual_seed(3);
    for (const torch::ScalarType table_dtype : {torch::kFloat32, dtype}) {
        const torch::Tensor x0 = torch::randn({2, 9, 5, 6}, on).to(dtype);  // (B, T, H, D)
        const torch::Tensor angles = torch::rand({9, 3}, on) * 6;
        const torch::Tensor emb = torch::cat({angles, angles}, -1);  // (T, D)
        const torch::Tensor cos = emb.cos().to(table_dtype), sin = emb.sin().to(table_dtype);
        torch::Tensor xa = x0.clone().requires_grad_(), xb = x0.clone().requires_grad_();
        const torch::Tensor ya = fused_rope(xa, cos, sin), yb = reference_rope(xb, cos, sin);
        EXPECT_TRUE(torch::equal(ya, yb));
        const torch::Tensor g = torch::randn(ya.sizes(), on).to(ya.scalar_type());
        (ya * g).sum().backward();
        (yb * g).sum().backward();
        EXPECT_EQ(xa.grad().scalar_type(), dtype);
        EXPECT_LE(relative(xa.grad(), xb.grad()), tol);
    }
}

// In place on a packed (B, T, q|k|v heads, D) buffer: the first heads rotated, in the buffer's dtype (what
// SDPA is handed after autocast), the rest untouched; the gradient flows back through the rotation.
TEST_P(FusedOps, RopeInPlaceEqualsTheOpByOpPath) {
    const torch::ScalarType dtype = GetParam().dtype;
    const double tol = GetParam().tolerance;
    const torch::TensorOptions on = torch::TensorOptions().device(device());
    torch::manual_seed(5);
    const int64_t rotated = 5;
    for (const torch::ScalarType table_dtype : {torch::kFloat32, dtype}) {
        SCOPED_TRACE(testing::Message() << "tables " << c10::toString(table_dtype));
        const torch::Tensor x0 = torch::randn({2, 9, 7, 6}, on).to(dtype);  // (B, T, 5 + 2, D)
        const torch::Tensor angles = torch::rand({9, 3}, on) * 6;
        const torch::Tensor emb = torch::cat({angles, angles}, -1);  // (T, D)
        const torch::Tensor cos = emb.cos().to(table_dtype), sin = emb.sin().to(table_dtype);
        const int64_t head_dim = x0.size(3);
        if (!rope_in_place_fits(x0.flatten(2), head_dim, cos, sin))
            GTEST_SKIP() << "no RoPE kernel here (CPU, or built without CUDA)";
        // On a non-leaf, as in the model: the product (B, T, H D) itself, the heads viewed after; and on a
        // view of it (autograd then copies the gradient around the in-place op, with the same result).
        for (const bool on_a_view : {false, true}) {
            SCOPED_TRACE(on_a_view ? "on a view" : "on the product");
            torch::Tensor xa = x0.clone().requires_grad_(), xb = x0.clone().requires_grad_();
            const torch::Tensor product = on_a_view ? (xa * 1).flatten(2) : xa.flatten(2) * 1;
            const torch::Tensor ya = rope_in_place(product, head_dim, rotated, cos, sin).view(x0.sizes());
            const std::vector<torch::Tensor> parts = xb.split_with_sizes({rotated, 2}, 2);
            const torch::Tensor yb = torch::cat({reference_rope(parts[0], cos, sin).to(dtype), parts[1]}, 2);
            EXPECT_EQ(ya.scalar_type(), dtype);
            // fp32 tables: the reference's fp32 ops rounded once, bit for bit; tables in bf16: one rounding
            // where the reference rounds three times.
            EXPECT_LE(relative(ya, yb), table_dtype == torch::kFloat32 ? 0.0 : tol);
            const torch::Tensor g = torch::randn(ya.sizes(), on).to(dtype);
            (ya * g).sum().backward();
            (yb * g).sum().backward();
            EXPECT_LE(relative(xa.grad(), xb.grad()), tol);
        }
    }
}

TEST_P(FusedOps, KernelsRunWhereTheEngineWasBuiltWithCuda) {
    if (GetParam().device != torch::kCUDA) GTEST_SKIP() << "the kernels are for CUDA devices";
    const char* off = std::getenv("SLIPWAY_CUDA_KERNELS");
    if (off != nullptr && std::string(off) == "0") GTEST_SKIP() << "SLIPWAY_CUDA_KERNELS=0";
    EXPECT_TRUE(kernels()) << "on a GPU the fused functions should run the CUDA kernels: built without CUDA?";
}

// fp32: rounding only (~1e-7 relative). bf16: the fused backward keeps fp32 where autograd's graph rounds
// intermediates to bf16 (2^-8 a step): a few steps apart at most.
INSTANTIATE_TEST_SUITE_P(Dtypes, FusedOps,
                         testing::Values(Case{torch::kFloat32, 1e-5, torch::kCPU},
                                         Case{torch::kBFloat16, 3e-2, torch::kCPU},
                                         Case{torch::kFloat32, 1e-5, torch::kCUDA},
                                         Case{torch::kBFloat16, 3e-2, torch::kCUDA}),
                         [](const testing::TestParamInfo<Case>& info) {
                             return std::string(info.param.device == torch::kCUDA ? "cuda_" : "cpu_") +
                                    (info.param.dtype == torch::kFloat32 ? "fp32" : "bf16");
                         });

}  // namespace
}  // namespace slipway::model
