// The model families (llama_config.h): which switches each config.json turns on as transformers' modeling
// files build them, their errors, the config.json the engine writes back, the planner's parameter list
// against the real module's for every family and method, the attention mask's rows (KV cache offsets,
// sliding window), and a checkpoint of one family refused by another. The numerics per family are checked
// against the independent reference by the model_reference_* tests.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "contract/run_config.h"
#include "model/llama.h"
#include "model/lora.h"
#include "model/torch_compat.h"
#include "model/weights.h"
#include "plan/plan.h"

namespace slipway::model {
namespace {

nlohmann::json small(const std::string& model_type) {
    return {{"model_type", model_type}, {"vocab_size", 100},
            {"hidden_size", 32},        {"intermediate_size", 48},
            {"num_hidden_layers", 2},   {"num_attention_heads", 4},
            {"num_key_value_heads", 2}, {"max_position_embeddings", 64}};
}

LlamaConfig parsed(const nlohmann::json& j) {
    Result<LlamaConfig> c = LlamaConfig::from_json(j);
    EXPECT_TRUE(c.ok()) << c.error();
    return c.ok() ? *c : LlamaConfig{};
}

TEST(ModelFamily, SwitchesFollowEachFamilysModelingFile) {
    const LlamaConfig qwen2 = parsed(small("qwen2"));
    EXPECT_TRUE(qwen2.qkv_bias);
    EXPECT_FALSE(qwen2.o_bias || qwen2.mlp_bias || qwen2.qk_norm);
    EXPECT_EQ(qwen2.sliding_window, 0);

    nlohmann::json j = small("qwen3");
    j["head_dim"] = 24;  // explicit, not hidden / heads (8)
    const LlamaConfig qwen3 = parsed(j);
    EXPECT_TRUE(qwen3.qk_norm);
    EXPECT_FALSE(qwen3.qkv_bias || qwen3.o_bias);
    EXPECT_EQ(qwen3.head_dim, 24);
    j["attention_bias"] = true;
    EXPECT_TRUE(parsed(j).qkv_bias && parsed(j).o_bias);

    EXPECT_EQ(parsed(small("mistral")).sliding_window, 4096);  // MistralConfig's default
    j = small("mistral");
    j["sliding_window"] = nullptr;
    EXPECT_EQ(parsed(j).sliding_window, 0);
    j["sliding_window"] = 16;
    EXPECT_EQ(parsed(j).sliding_window, 16);

    j = small("llama");
    EXPECT_FALSE(parsed(j).qkv_bias);
    j["attention_bias"] = true;
    j["mlp_bias"] = true;
    EXPECT_TRUE(parsed(j).qkv_bias && parsed(j).o_bias && parsed(j).mlp_bias);
    EXPECT_EQ(parsed(j).sliding_window, 0);
}

TEST(ModelFamily, ErrorsNameTheKey) {
    nlohmann::json j = small("gemma");
    Result<LlamaConfig> c = LlamaConfig::from_json(j);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("model_type \"gemma\" is not supported (llama, mistral, qwen2, qwen3)"),
              std::string::npos)
        << c.error();

    j = small("qwen2");
    j["use_sliding_window"] = true;
    c = LlamaConfig::from_json(j);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("use_sliding_window"), std::string::npos) << c.error();

    j = small("llama");
    j["attention_bias"] = "yes";
    c = LlamaConfig::from_json(j);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("attention_bias must be true or false"), std::string::npos) << c.error();

    j = small("mistral");
    j["sliding_window"] = -1;
    EXPECT_FALSE(LlamaConfig::from_json(j).ok());
}

TEST(ModelFamily, WrittenConfigReadsBackTheSame) {
    nlohmann::json mistral = small("mistral");
    mistral["sliding_window"] = 16;
    nlohmann::json qwen3 = small("qwen3");
    qwen3["head_dim"] = 24;
    nlohmann::json llama = small("llama");
    llama["attention_bias"] = true;
    const std::pair<nlohmann::json, std::string> cases[] = {{llama, "LlamaForCausalLM"},
                                                            {mistral, "MistralForCausalLM"},
                                                            {small("qwen2"), "Qwen2ForCausalLM"},
                                                            {qwen3, "Qwen3ForCausalLM"}};
    for (const auto& [json, architecture] : cases) {
        const LlamaConfig c = parsed(json);
        const nlohmann::json written = c.to_json();
        EXPECT_EQ(written["architectures"][0], architecture);
        const LlamaConfig back = parsed(written);
        EXPECT_EQ(back.model_type, c.model_type);
        EXPECT_EQ(back.qkv_bias, c.qkv_bias) << architecture;
        EXPECT_EQ(back.o_bias, c.o_bias) << architecture;
        EXPECT_EQ(back.mlp_bias, c.mlp_bias) << architecture;
        EXPECT_EQ(back.qk_norm, c.qk_norm) << architecture;
        EXPECT_EQ(back.sliding_window, c.sliding_window) << architecture;
        EXPECT_EQ(back.head_dim, c.head_dim) << architecture;
    }
}

int64_t elements(LlamaForCausalLM& model) {
    int64_t n = 0;
    for (const auto& item : model->named_parameters())
        n += item.value().numel();
    return n;
}

// The planner counts parameters from the config alone (plan.cpp's inventory); the module has the real ones.
TEST(ModelFamily, PlannerCountsWhatTheModuleHas) {
    nlohmann::json qwen3 = small("qwen3");
    qwen3["head_dim"] = 24;
    nlohmann::json llama = small("llama");
    llama["attention_bias"] = true;
    llama["mlp_bias"] = true;
    llama["tie_word_embeddings"] = true;
    for (const nlohmann::json& json : {small("qwen2"), qwen3, small("mistral"), llama}) {
        const LlamaConfig config = parsed(json);
        for (const std::string method : {"full", "lora"}) {
            LlamaForCausalLM model(config);
            if (method == "full") EXPECT_EQ(config.parameter_count(), elements(model)) << json.dump();
            RunConfig run;
            run.adapter.method = method;
            run.adapter.r = 4;
            run.adapter.target_modules = {"q_proj", "k_proj", "v_proj", "o_proj"};
            run.model.init = "random";
            run.data.block_size = 8;
            run.slurm.gpus_per_node = 0;
            if (method == "lora") ASSERT_TRUE(apply_lora(model, run.adapter).ok());
            plan::HostFacts host;
            host.memory_bytes = int64_t{16} << 30;
            host.cpu_cores = 2;
            Result<plan::Plan> p = plan::make_plan(run, config, host);
            ASSERT_TRUE(p.ok()) << p.error();
            EXPECT_EQ(p->parameters, elements(model)) << method << " " << json.dump();
        }
    }
}

// Row i of the mask is the query at position Tk - Tq + i; -inf marks the keys it must not see.
// A conversation's loss is over its trained targets only: causal_lm_loss with `trained` positions equals
// torch's cross_entropy over the whole logits with the other labels -100 (ignore_index), value and gradient;
// no trained target gives 0 with a gradient of zeros.
TEST(ModelFamily, LossOverTrainedTargetsEqualsCrossEntropyWithIgnoredLabels) {
    torch::manual_seed(11);
    LlamaForCausalLM a(parsed(small("llama"))), b(parsed(small("llama")));
    // A new model's linear weights are uninitialised memory (a checkpoint or init_weights fills them): NaN
    // there made both losses NaN on LibTorch 2.14 now and then.
    init_weights(a, 11);
    {
        torch::NoGradGuard no_grad;
        const auto pa = a->parameters(), pb = b->parameters();
        for (size_t i = 0; i < pa.size(); ++i)
            pb[i].copy_(pa[i]);
    }
    const torch::Tensor ids = torch::randint(100, {3, 9}, torch::kInt64);   // (B, T)
    const torch::Tensor keep = torch::rand({3, 8}) < 0.4;                   // (B, T-1) trained targets
    const torch::Tensor trained = keep.reshape({-1}).nonzero().squeeze(1);  // (K) in B x (T-1) order
    ASSERT_GT(trained.size(0), 0);
    const LossResult mine = causal_lm_loss(a, ids, true, trained);
    EXPECT_EQ(mine.tokens, trained.size(0));
    const torch::Tensor labels = ids.slice(1, 1).masked_fill(keep.logical_not(), -100).reshape({-1});  // (N)
    const torch::Tensor logits = b->logits(ids).slice(1, 0, -1).reshape({-1, 100});  // (N, V)
    const torch::Tensor reference = torch::nn::functional::cross_entropy(
        logits, labels, torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100));
    EXPECT_NEAR(mine.loss.item<double>(), reference.item<double>(), 1e-5);
    mine.loss.backward();
    reference.backward();
    const auto pa = a->named_parameters(), pb = b->named_parameters();
    for (const auto& item : pa) {
        const torch::Tensor ga = item.value().grad(), gb = pb[item.key()].grad();
        ASSERT_TRUE(ga.defined()) << item.key();
        EXPECT_LE((ga - gb).abs().max().item<double>(), 1e-5 * std::max(1.0, gb.abs().max().item<double>()))
            << item.key();
    }
    const LossResult none = causal_lm_loss(a, ids, false, torch::empty({0}, torch::kInt64));
    EXPECT_EQ(none.tokens, 0);
    EXPECT_EQ(none.loss.item<double>(), 0.0);
}

TEST(ModelFamily, AttentionMaskRowsForCacheAndWindow) {
    auto seen = [](const torch::Tensor& mask) {
        std::vector<std::vector<int>> rows;
        for (int64_t i = 0; i < mask.size(0); ++i) {
            rows.emplace_back();
            for (int64_t j = 0; j < mask.size(1); ++j)
                rows.back().push_back(std::isinf(mask[i][j].item<float>()) ? 0 : 1);
        }
        return rows;
    };
    const auto options = torch::TensorOptions().dtype(torch::kFloat32);
    // Two new queries after three cached positions.
    EXPECT_EQ(seen(attention_mask(2, 5, 0, options)),
              (std::vector<std::vector<int>>{{1, 1, 1, 1, 0}, {1, 1, 1, 1, 1}}));
    // A window of 2: each query sees itself and the one before.
    EXPECT_EQ(seen(attention_mask(2, 5, 2, options)),
              (std::vector<std::vector<int>>{{0, 0, 1, 1, 0}, {0, 0, 0, 1, 1}}));
    EXPECT_EQ(seen(attention_mask(3, 3, 2, options)),
              (std::vector<std::vector<int>>{{1, 0, 0}, {1, 1, 0}, {0, 1, 1}}));
    // A window no shorter than the keys cuts nothing: square and unwindowed, as a plain causal mask
    // (undefined on torch 2.x, whose fused kernel masks by itself).
    const torch::Tensor plain = attention_mask(3, 3, 3, options);
    if (plain.defined())
        EXPECT_EQ(seen(plain), (std::vector<std::vector<int>>{{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}));
}

TEST(ModelFamily, CheckpointOfAnotherFamilyIsRefusedByName) {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("slipway_model_family_" + std::to_string(getpid())))
            .string();
    LlamaForCausalLM qwen2(parsed(small("qwen2")));
    ASSERT_TRUE(save_hf_model(qwen2, dir, "float32").ok());
    Result<LlamaForCausalLM> back = load_hf_model(dir);
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_TRUE(torch::equal((*back)->model->layers->ptr<DecoderLayerImpl>(1)->self_attn->k_proj->bias,
                             qwen2->model->layers->ptr<DecoderLayerImpl>(1)->self_attn->k_proj->bias));
    // The same weights under a Llama config.json: the biases are not part of that model.
    nlohmann::json llama = qwen2->config.to_json();
    llama["model_type"] = "llama";
    llama.erase("use_sliding_window");
    { std::ofstream(dir + "/config.json") << llama.dump(); }
    back = load_hf_model(dir);
    ASSERT_FALSE(back.ok());
    EXPECT_NE(back.error().find("unexpected weight \"model.layers."), std::string::npos) << back.error();
    EXPECT_NE(back.error().find("_proj.bias\" [16] (not part of this model)"), std::string::npos)
        << back.error();
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace slipway::model
