// The joint products' adapters (llama.cpp's add_joint_lora: one product for the stacked A's of q|k|v or
// gate|up, and one addmm of the block-diagonal B's into the base's output) against each adapter's own
// forward, the path taken where dropout is set (here with the model in eval mode, so dropout is the
// identity and both paths compute the same function): logits and every adapter gradient. And adapted_linear,
// the autograd function under both, against its op-by-op formula.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "contract/run_config.h"
#include "model/adapted_linear.h"
#include "model/llama.h"
#include "model/lora.h"
#include "model/weights.h"

namespace slipway::model {
namespace {

LlamaForCausalLM adapted_model(double dropout) {
    Result<LlamaConfig> config = LlamaConfig::from_json({{"vocab_size", 97},
                                                         {"hidden_size", 48},
                                                         {"intermediate_size", 80},
                                                         {"num_hidden_layers", 2},
                                                         {"num_attention_heads", 4},
                                                         {"num_key_value_heads", 2},
                                                         {"max_position_embeddings", 64},
                                                         {"attention_bias", true}});
    EXPECT_TRUE(config.ok());
    LlamaForCausalLM model(*config);
    init_weights(model, 7);
    AdapterConfig adapter;
    adapter.method = "lora";
    adapter.r = 4;
    adapter.lora_alpha = 8;
    adapter.lora_dropout = dropout;
    adapter.target_modules = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
    adapter.rank_pattern = {{"layers.1.self_attn.k_proj", 2}};  // unequal ranks in one joint product
    torch::manual_seed(11);  // the same A (PEFT's init) and B in both models
    EXPECT_TRUE(apply_lora(model, adapter).ok());
    torch::NoGradGuard no_grad;
    for (auto& p : model->named_parameters()) {
        if (p.key().find("lora_B") != std::string::npos) p.value().normal_(0, 0.2);  // B = 0 would hide it
        p.value().set_requires_grad(p.key().find("lora_") != std::string::npos);
    }
    model->eval();
    return model;
}

TEST(JointLora, EqualsEachAdapterOnItsOwn) {
    LlamaForCausalLM joint = adapted_model(0.0), separate = adapted_model(0.1);
    torch::manual_seed(3);
    const torch::Tensor ids = torch::randint(97, {2, 11}, torch::kInt64);
    const torch::Tensor a = joint->logits(ids), b = separate->logits(ids);  // (B, T, V)
    EXPECT_LE((a - b).abs().max().item<double>(), 1e-5 * b.abs().max().item<double>());
    a.square().mean().backward();
    b.square().mean().backward();
    const auto joint_params = joint->named_parameters(), separate_params = separate->named_parameters();
    int64_t compared = 0;
    for (const auto& p : joint_params) {
        if (!p.value().requires_grad()) continue;
        const torch::Tensor ga = p.value().grad(), gb = separate_params[p.key()].grad();
        ASSERT_TRUE(ga.defined() && gb.defined()) << p.key();
        EXPECT_LE((ga - gb).abs().max().item<double>(), 1e-5 * gb.abs().max().item<double>() + 1e-12)
            << p.key();
        ++compared;
    }
    EXPECT_EQ(compared, 2 * 7 * 2);  // layers x targets x (A, B)
}

// y = x W^T + b + (x A^T) B^T with W and b frozen: the output, and the gradients of x, A and B, against the
// same formula run op by op; fp32, and a bf16 base with fp32 adapters (the products in bf16, each gradient
// in its input's dtype).
TEST(JointLora, AdaptedLinearEqualsItsFormula) {
    for (const torch::ScalarType base : {torch::kFloat32, torch::kBFloat16}) {
        SCOPED_TRACE(c10::toString(base));
        torch::manual_seed(5);
        const torch::Tensor x0 = torch::randn({2, 7, 24}).to(base);  // (B, T, C)
        const torch::Tensor w = torch::randn({13, 24}).to(base), bias = torch::randn({13}).to(base);
        const torch::Tensor a0 = torch::randn({3, 24}) * 0.3, b0 = torch::randn({13, 3}) * 0.3;  // fp32
        torch::Tensor xa = x0.clone().requires_grad_(), xb = x0.clone().requires_grad_();
        torch::Tensor aa = a0.clone().requires_grad_(), ab = a0.clone().requires_grad_();
        torch::Tensor ba = b0.clone().requires_grad_(), bb = b0.clone().requires_grad_();
        ASSERT_TRUE(adapted_linear_applies(w, bias));
        const torch::Tensor ya = adapted_linear(xa, w, bias, aa, ba);  // (B, T, 13)
        const torch::Tensor yb =
            torch::linear(xb, w, bias) + torch::matmul(torch::matmul(xb, ab.to(base).t()), bb.to(base).t());
        EXPECT_FALSE(ya.is_view()) << "an in-place op on the output would copy its gradient";
        EXPECT_EQ(ya.scalar_type(), base);
        EXPECT_EQ(ya.sizes(), yb.sizes());
        // fp32: rounding only. bf16: the reference rounds the base product and the adapter's term apart, the
        // function once (their sum accumulated), so a few bf16 steps at most.
        const double tol = base == torch::kFloat32 ? 1e-5 : 2e-2;
        const auto relative = [](const torch::Tensor& p, const torch::Tensor& q) {
            return ((p.to(torch::kFloat32) - q.to(torch::kFloat32)).abs().max() /
                    q.to(torch::kFloat32).abs().max())
                .item<double>();
        };
        EXPECT_LE(relative(ya, yb), tol);
        const torch::Tensor g = torch::randn(ya.sizes()).to(base);
        (ya.to(torch::kFloat32) * g.to(torch::kFloat32)).sum().backward();
        (yb.to(torch::kFloat32) * g.to(torch::kFloat32)).sum().backward();
        EXPECT_EQ(xa.grad().scalar_type(), base);
        EXPECT_EQ(aa.grad().scalar_type(), torch::kFloat32);
        EXPECT_LE(relative(xa.grad(), xb.grad()), tol);
        EXPECT_LE(relative(aa.grad(), ab.grad()), tol);
        EXPECT_LE(relative(ba.grad(), bb.grad()), tol);
    }
}

TEST(JointLora, AdaptedLinearRefusesATrainedBase) {
    const torch::Tensor w = torch::randn({4, 3}).requires_grad_();
    EXPECT_FALSE(adapted_linear_applies(w, {}));
    EXPECT_FALSE(adapted_linear_applies(w.detach(), torch::zeros({4}).requires_grad_()));
    EXPECT_TRUE(adapted_linear_applies(w.detach(), {}));
}

}  // namespace
}  // namespace slipway::model
