// The joint products' adapters (llama.cpp's add_joint_lora: one product for the stacked A's of q|k|v or
// gate|up, and one addmm of the block-diagonal B's into the base's output) against each adapter's own
// forward, the path taken where dropout is set (here with the model in eval mode, so dropout is the
// identity and both paths compute the same function): logits and every adapter gradient.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "contract/run_config.h"
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

}  // namespace
}  // namespace slipway::model
