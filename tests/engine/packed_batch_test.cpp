// Packed conversations compute exactly what each computes alone: batches of marked blocks (the token
// cache's layout) give each conversation of a packed row the same loss and the same gradients as that
// conversation run by itself, for every family's attention path (CPU RoPE loop, Qwen3's q/k norms, a
// sliding window inside the documents, the ATen path under bf16 autocast). Also the batch's own reading of
// the marks: positions restarting per document, no target across a document start, a batch of unpacked
// conversations cut after its last trained token.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "data/token_cache_meta.h"
#include "model/llama.h"
#include "model/torch_compat.h"
#include "model/weights.h"
#include "train/batches.h"

namespace slipway::train {
namespace {

using data::kDocumentStartBit;
using data::kUntrainedTokenBit;

constexpr int64_t kVocab = 100;

struct Conversation {
    std::vector<uint32_t> ids;
    std::vector<bool> trained;  // per token; the first never
};

Conversation random_conversation(int64_t length, std::mt19937& rng) {
    Conversation c;
    std::uniform_int_distribution<uint32_t> id(0, kVocab - 1);
    std::bernoulli_distribution coin(0.6);
    for (int64_t i = 0; i < length; ++i) {
        c.ids.push_back(id(rng));
        c.trained.push_back(i > 0 && coin(rng));
    }
    c.trained.back() = true;
    return c;
}

// A packed block: the conversations back to back, each first token marked, then padding (its own document).
std::vector<uint32_t> packed_block(const std::vector<const Conversation*>& conversations, size_t block_size) {
    std::vector<uint32_t> block;
    for (const Conversation* c : conversations) {
        for (size_t i = 0; i < c->ids.size(); ++i) {
            block.push_back(c->ids[i] | (c->trained[i] ? 0u : kUntrainedTokenBit) |
                            (i == 0 ? kDocumentStartBit : 0u));
        }
    }
    if (block.size() < block_size) {
        const size_t used = block.size();
        block.resize(block_size, 7u | kUntrainedTokenBit);
        block[used] |= kDocumentStartBit;
    }
    return block;
}

std::map<std::string, torch::Tensor> gradients(model::LlamaForCausalLM& model) {
    std::map<std::string, torch::Tensor> out;
    for (const auto& item : model->named_parameters()) {
        out[item.key()] =
            item.value().grad().defined() ? item.value().grad().clone() : torch::zeros_like(item.value());
        item.value().mutable_grad() = torch::Tensor();
    }
    return out;
}

struct Outcome {
    double loss = 0;
    std::map<std::string, torch::Tensor> grads;
};

Outcome alone(model::LlamaForCausalLM& model, const Conversation& c, bool bf16) {
    std::vector<int64_t> ids(c.ids.begin(), c.ids.end()), targets;
    for (size_t i = 1; i < c.ids.size(); ++i)
        if (c.trained[i]) targets.push_back(static_cast<int64_t>(i) - 1);
    Outcome o;
    {
        model::Bf16Autocast autocast(bf16);
        const model::LossResult r =
            model::causal_lm_loss(model, torch::tensor(ids, torch::kInt64).unsqueeze(0), false,
                                  torch::tensor(targets, torch::kInt64));
        o.loss = r.loss.item<double>();
        r.loss.backward();
    }
    o.grads = gradients(model);
    return o;
}

// The conversation at tokens [start, start + length) of row `row` in the packed batch.
Outcome packed(model::LlamaForCausalLM& model, const Batch& batch, int64_t row, int64_t start, int64_t length,
               bool bf16) {
    const int64_t t = batch.ids.size(1);
    const int64_t lo = row * (t - 1) + start, hi = row * (t - 1) + start + length - 1;
    const torch::Tensor mine =
        batch.trained.masked_select(batch.trained.ge(lo).logical_and(batch.trained.lt(hi)));
    Outcome o;
    {
        model::Bf16Autocast autocast(bf16);
        const model::LossResult r = model::causal_lm_loss(model, batch.ids, false, mine, batch.documents);
        o.loss = r.loss.item<double>();
        r.loss.backward();
    }
    o.grads = gradients(model);
    return o;
}

model::LlamaConfig config_of(nlohmann::json j) {
    Result<model::LlamaConfig> c = model::LlamaConfig::from_json(j);
    EXPECT_TRUE(c.ok()) << c.error();
    return c.ok() ? *c : model::LlamaConfig{};
}

nlohmann::json small(const std::string& model_type) {
    return {{"model_type", model_type}, {"vocab_size", kVocab},         {"hidden_size", 32},
            {"intermediate_size", 48},  {"num_hidden_layers", 2},       {"num_attention_heads", 4},
            {"num_key_value_heads", 2}, {"max_position_embeddings", 64}};
}

struct Case {
    std::string name;
    nlohmann::json config;
    bool bf16 = false;
    double tolerance = 1e-5;  // relative to the larger of 1 and the value's scale
};

TEST(PackedBatch, EachConversationComputesWhatItDoesAlone) {
    nlohmann::json mistral = small("mistral");
    mistral["sliding_window"] = 3;  // cuts inside the longer conversations
    nlohmann::json qwen3 = small("qwen3");
    qwen3["head_dim"] = 16;
    const std::vector<Case> cases = {{"llama fp32", small("llama")},
                                     {"qwen2 fp32 (q/k/v biases)", small("qwen2")},
                                     {"qwen3 fp32 (q/k norms)", qwen3},
                                     {"mistral fp32, window 3", mistral},
                                     {"llama under bf16 autocast", small("llama"), true, 3e-2}};
    for (const Case& test : cases) {
        SCOPED_TRACE(test.name);
        model::LlamaForCausalLM model(config_of(test.config));
        model::init_weights(model, 3);
        std::mt19937 rng(17);
        const Conversation a = random_conversation(6, rng), b = random_conversation(9, rng),
                           c = random_conversation(11, rng), d = random_conversation(7, rng);
        // Blocks of 20 tokens. Row 0: a, b and 5 of padding; row 1: c, d and 2 of padding.
        const std::vector<uint32_t> row0 = packed_block({&a, &b}, 20), row1 = packed_block({&c, &d}, 20);
        const Batch batch = batch_of_blocks({{row0.data(), row0.size()}, {row1.data(), row1.size()}},
                                            /*conversations=*/true, /*packed=*/true);
        ASSERT_TRUE(batch.documents.defined());
        struct Placed {
            const Conversation* conversation;
            int64_t row, start;
        };
        for (const Placed& p : {Placed{&a, 0, 0}, Placed{&b, 0, 6}, Placed{&c, 1, 0}, Placed{&d, 1, 11}}) {
            const auto length = static_cast<int64_t>(p.conversation->ids.size());
            const Outcome one = alone(model, *p.conversation, test.bf16);
            const Outcome in_pack = packed(model, batch, p.row, p.start, length, test.bf16);
            EXPECT_NEAR(in_pack.loss, one.loss, test.tolerance * std::max(1.0, std::abs(one.loss)))
                << "row " << p.row << " at " << p.start;
            for (const auto& [name, g] : one.grads) {
                const double scale = std::max(1.0, g.abs().max().item<double>());
                EXPECT_LE((in_pack.grads.at(name) - g).abs().max().item<double>(), test.tolerance * scale)
                    << name << ", row " << p.row << " at " << p.start;
            }
        }
    }
}

TEST(PackedBatch, ReadsPositionsDocumentsAndTargetsFromTheMarks) {
    const uint32_t u = kUntrainedTokenBit, s = kDocumentStartBit;
    // Two documents of 3 and 2 tokens, then 3 of padding. Document 2's first token is marked trained
    // (train_on all): no target may reach it from document 1's last token.
    const std::vector<uint32_t> block = {1 | u | s, 2, 3, 4 | s, 5, 6 | u | s, 6 | u, 6 | u};
    const Batch batch = batch_of_blocks({{block.data(), block.size()}}, true, true);
    ASSERT_EQ(batch.ids.size(1), 5) << "cut after the last trained token";
    EXPECT_TRUE(torch::equal(batch.ids, torch::tensor({{1, 2, 3, 4, 5}}, torch::kInt64)));
    EXPECT_TRUE(torch::equal(batch.documents.positions, torch::tensor({{0, 1, 2, 0, 1}}, torch::kInt64)));
    EXPECT_TRUE(torch::equal(batch.documents.documents, torch::tensor({{0, 0, 0, 1, 1}}, torch::kInt64)));
    // Targets: token 1 (2), token 2 (3), token 4 (5); not token 3, a document start.
    EXPECT_TRUE(torch::equal(batch.trained, torch::tensor({0, 1, 3}, torch::kInt64)));

    // Unpacked: one conversation a block; the batch is cut to its longest trained span.
    const std::vector<uint32_t> first = {1 | u, 2, 3 | u, 9 | u, 9 | u, 9 | u},
                                second = {1 | u, 2 | u, 3, 4, 9 | u, 9 | u};
    const Batch plain = batch_of_blocks({{first.data(), 6}, {second.data(), 6}}, true, false);
    EXPECT_FALSE(plain.documents.defined());
    ASSERT_EQ(plain.ids.size(1), 4);
    EXPECT_TRUE(torch::equal(plain.trained, torch::tensor({0, 4, 5}, torch::kInt64)));

    // Text: every target, the whole block.
    const std::vector<uint32_t> text = {1, 2, 3, 4};
    const Batch whole = batch_of_blocks({{text.data(), 4}}, false, false);
    EXPECT_EQ(whole.ids.size(1), 4);
    EXPECT_FALSE(whole.trained.defined());
}

// The document mask: a query sees the keys of its own document, itself and before, inside the window.
TEST(PackedBatch, DocumentMaskKeepsAttentionInsideEachDocument) {
    const torch::Tensor documents = torch::tensor({{0, 0, 0, 1, 1, 2}}, torch::kInt64);
    const torch::Tensor mask = model::document_attention_mask(documents, 2, torch::TensorOptions());
    ASSERT_EQ(mask.sizes(), (std::vector<int64_t>{1, 1, 6, 6}));
    const torch::Tensor seen = mask[0][0].isinf().logical_not().to(torch::kInt64);
    EXPECT_TRUE(torch::equal(seen, torch::tensor({{1, 0, 0, 0, 0, 0},
                                                  {1, 1, 0, 0, 0, 0},
                                                  {0, 1, 1, 0, 0, 0},
                                                  {0, 0, 0, 1, 0, 0},
                                                  {0, 0, 0, 1, 1, 0},
                                                  {0, 0, 0, 0, 0, 1}},
                                                 torch::kInt64)));
}

}  // namespace
}  // namespace slipway::train
