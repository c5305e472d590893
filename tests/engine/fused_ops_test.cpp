// The GPU path's fused RMSNorm, SwiGLU and RoPE (model/fused_ops.h) against the op-by-op formulas they
// replace (autograd's own gradients), forward and backward, on the CPU: fp32 to rounding, bf16 to a few
// bf16 steps. Odd sizes included. The tests/gpu `kernels` check runs the same comparison on a GPU.
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
};

TEST_P(FusedOps, RmsNormEqualsTheOpByOpPath) {
    const torch::ScalarType dtype = GetParam().dtype;
    const double tol = GetParam().tolerance;
    const torch::TensorOptions on = torch::TensorOptions().device(device());
    torch::manual_seed(1);
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{2, 7, 33}, std::vector<int64_t>{3, 5, 256}}) {
        const torch::Tensor x0 = torch::randn(shape, on).to(dtype);
        const torch::Tensor w0 = torch::rand({shape.back()}, on) + 0.5;  // fp32 weight, as the model's
        const torch::Tensor g = torch::randn(shape, on);
        torch::Tensor xa = x0.clone().requires_grad_(), wa = w0.clone().requires_grad_();
        torch::Tensor xb = x0.clone().requires_grad_(), wb = w0.clone().requires_grad_();
        const torch::Tensor ya = fused_rms_norm(xa, wa, 1e-5), yb = reference_rms_norm(xb, wb, 1e-5);
        EXPECT_EQ(ya.scalar_type(), yb.scalar_type());
        EXPECT_TRUE(torch::equal(ya, yb)) << "forward: the same ops";
        (ya * g).sum().backward();
        (yb * g).sum().backward();
        EXPECT_LE(relative(xa.grad(), xb.grad()), tol);
        EXPECT_LE(relative(wa.grad(), wb.grad()), tol);
    }
}

TEST_P(FusedOps, SwigluEqualsTheOpByOpPath) {
    const torch::ScalarType dtype = GetParam().dtype;
    const double tol = GetParam().tolerance;
    const torch::TensorOptions on = torch::TensorOptions().device(device());
    torch::manual_seed(2);
    const torch::Tensor gate0 = (torch::randn({3, 5, 47}, on) * 3).to(dtype),
                        up0 = torch::randn({3, 5, 47}, on).to(dtype);
    const torch::Tensor g = torch::randn({3, 5, 47}, on).to(dtype);
    torch::Tensor ga = gate0.clone().requires_grad_(), ua = up0.clone().requires_grad_();
    torch::Tensor gb = gate0.clone().requires_grad_(), ub = up0.clone().requires_grad_();
    const torch::Tensor ya = fused_swiglu(ga, ua), yb = torch::silu(gb) * ub;
    EXPECT_TRUE(torch::equal(ya, yb));
    (ya * g).sum().backward();
    (yb * g).sum().backward();
    EXPECT_LE(relative(ga.grad(), gb.grad()), tol);
    EXPECT_LE(relative(ua.grad(), ub.grad()), tol);
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
