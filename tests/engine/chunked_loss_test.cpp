// The fused head + cross-entropy (model/chunked_loss.h) against torch's own cross_entropy over the whole
// logits, loss and gradients: the fp32 path to rounding, the bf16 path (what training on a GPU under bf16
// runs; forced here on the CPU) to bf16's precision, both over several chunks including a short last one.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "model/chunked_loss.h"

namespace slipway::model {
namespace {

double relative(const torch::Tensor& a, const torch::Tensor& b) {
    const torch::Tensor a64 = a.to(torch::kFloat64), b64 = b.to(torch::kFloat64);
    return (a64 - b64).abs().max().item<double>() / std::max(b64.abs().max().item<double>(), 1e-30);
}

struct Case {
    HeadPrecision precision;
    double loss_tolerance, grad_tolerance;
};
void PrintTo(const Case& c, std::ostream* os) {
    *os << (c.precision == HeadPrecision::kFloat32 ? "fp32" : "bf16") << " head";
}

class ChunkedLossTest : public testing::TestWithParam<Case> {};

TEST_P(ChunkedLossTest, EqualsCrossEntropyOverTheWholeLogits) {
    torch::manual_seed(5);
    const int64_t n = 37, c = 24, v = 50;
    const torch::Tensor h0 = torch::randn({n, c}), w0 = torch::randn({v, c}) * 0.3;
    const torch::Tensor targets = torch::randint(v, {n}, torch::kInt64);
    torch::Tensor ha = h0.clone().requires_grad_(), wa = w0.clone().requires_grad_();
    torch::Tensor hb = h0.clone().requires_grad_(), wb = w0.clone().requires_grad_();
    const ChunkedLoss fused = chunked_cross_entropy(ha, wa, targets, /*chunk_rows=*/8, /*count_correct=*/true,
                                                    GetParam().precision);
    const torch::Tensor logits = torch::matmul(hb, wb.t());  // (N, V)
    const torch::Tensor reference = torch::nn::functional::cross_entropy(logits, targets);
    EXPECT_LE(relative(fused.loss, reference), GetParam().loss_tolerance);
    EXPECT_EQ(fused.correct, logits.argmax(1).eq(targets).sum().item<int64_t>());
    (fused.loss * 3).backward();  // an upstream gradient other than 1 scales both gradients
    (reference * 3).backward();
    EXPECT_LE(relative(ha.grad(), hb.grad()), GetParam().grad_tolerance);
    EXPECT_LE(relative(wa.grad(), wb.grad()), GetParam().grad_tolerance);
    EXPECT_EQ(wa.grad().scalar_type(), torch::kFloat32);
}

// bf16: h and w rounded to 8 bits of mantissa (2^-9 relative) before fp32-accumulated products.
INSTANTIATE_TEST_SUITE_P(Precisions, ChunkedLossTest,
                         testing::Values(Case{HeadPrecision::kFloat32, 1e-6, 1e-5},
                                         Case{HeadPrecision::kBFloat16, 1e-2, 3e-2}),
                         [](const testing::TestParamInfo<Case>& info) {
                             return info.param.precision == HeadPrecision::kFloat32 ? std::string("fp32")
                                                                                    : std::string("bf16");
                         });

}  // namespace
}  // namespace slipway::model
