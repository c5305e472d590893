// The planner's arithmetic (engine/plan) against figures computed by hand for a small model: parameter
// counts by training method, fp32 weights / gradients / AdamW states, sharded slices with padding, one
// layer's activations on the CPU fp32 path, FLOPs per step, and the verdict with its reason.
#include <gtest/gtest.h>

#include "plan/plan.h"

namespace slipway::plan {
namespace {

// vocab 1000, hidden 64, intermediate 128, 2 layers, 4 heads of 16, 2 kv heads, untied:
// embed 64000; per layer q 4096 + k 2048 + v 2048 + o 4096 + mlp 3 x 8192 + norms 128 = 36992;
// final norm 64; lm_head 64000. Total 202048.
model::LlamaConfig small_model() {
    model::LlamaConfig m;
    m.vocab_size = 1000;
    m.hidden_size = 64;
    m.intermediate_size = 128;
    m.num_hidden_layers = 2;
    m.num_attention_heads = 4;
    m.num_key_value_heads = 2;
    m.head_dim = 16;
    return m;
}

// A CPU run: 2 sequences of 8 tokens per rank, fp32.
RunConfig cpu_run(const std::string& method) {
    RunConfig c;
    c.adapter.method = method;
    c.adapter.r = 4;
    c.adapter.target_modules = {"q_proj", "v_proj"};
    c.model.init = "random";
    c.data.block_size = 8;
    c.training.per_device_train_batch_size = 2;
    c.training.max_steps = 10;
    c.slurm.gpus_per_node = 0;
    return c;
}

HostFacts host() {
    HostFacts h;
    h.memory_bytes = int64_t{16} << 30;
    h.cpu_cores = 2;
    return h;
}

Plan plan_of(const RunConfig& c, const model::LlamaConfig& m = small_model()) {
    Result<Plan> p = make_plan(c, m, host());
    EXPECT_TRUE(p.ok()) << p.error();
    return p.ok() ? *p : Plan{};
}

TEST(Plan, FullTrainingKeepsSixteenBytesPerParameter) {
    const Plan p = plan_of(cpu_run("full"));
    EXPECT_EQ(p.parameters, 202048);
    EXPECT_EQ(p.trainable_parameters, 202048);
    EXPECT_EQ(p.breakdown.weights, 4 * 202048);
    EXPECT_EQ(p.breakdown.gradients, 4 * 202048);
    EXPECT_EQ(p.breakdown.optimizer_states, 8 * 202048);
    EXPECT_EQ(p.breakdown.communication, 0);  // one rank: no DDP buckets
    EXPECT_EQ(p.per_device_bytes, std::max({p.setup_bytes, p.forward_bytes, p.backward_bytes}));
    EXPECT_EQ(p.device_bytes, int64_t{16} << 30);
    EXPECT_TRUE(p.fits);
    EXPECT_TRUE(p.reason.empty());
}

TEST(Plan, LoraTrainsOnlyTheAdapters) {
    // q: A 4x64 + B 64x4 = 512; v: A 4x64 + B 32x4 = 384; two layers.
    const Plan p = plan_of(cpu_run("lora"));
    EXPECT_EQ(p.trainable_parameters, 2 * (512 + 384));
    EXPECT_EQ(p.parameters, 202048 + 1792);
    EXPECT_EQ(p.breakdown.weights, 4 * (202048 + 1792));
    EXPECT_EQ(p.breakdown.gradients, 4 * 1792);
    EXPECT_EQ(p.breakdown.optimizer_states, 8 * 1792);
}

TEST(Plan, EmbeddingsOnlyTrainsEmbeddingAndHead) {
    const Plan p = plan_of(cpu_run("embeddings"));
    EXPECT_EQ(p.trainable_parameters, 2 * 64000);
}

TEST(Plan, OneLayersActivationsOnTheCpuFp32Path) {
    // N = 16 tokens, C 64, I 128, q|k|v 128 wide, q|k 96, B 2 x H 4 x T 8 x T 8 softmax (fp32 throughout):
    // input 4NC + normed 4NC + q|k|v 4N128 + roped q|k 4N96 + softmax 4x2x4x64 + attention out 4NC
    // + residual 4NC + normed 4NC + gate|up 4N256 + silu and product 2 x 4N128 = 69632 bytes.
    const Plan p = plan_of(cpu_run("full"));
    EXPECT_EQ(p.activation_bytes_per_layer, 69632);
    EXPECT_EQ(p.checkpointed_activation_bytes_per_layer, 4 * 16 * 64);
    EXPECT_FALSE(p.chunked_loss);  // 2 x 7 rows x 1000 logits is small: one cross_entropy
}

TEST(Plan, FrozenLayerWeightsAreConcatenatedCopies) {
    // LoRA: q|k|v and gate|up of a frozen base are separate tensors, joined by a copy autograd keeps:
    // (128 + 256) x 64 x 4 bytes more per layer than side-by-side weights, plus each adapter's (N, r).
    RunConfig lora = cpu_run("lora");
    lora.adapter.target_modules = {"q_proj"};
    const Plan p = plan_of(lora);
    EXPECT_EQ(p.activation_bytes_per_layer, 69632 + (128 + 256) * 64 * 4 + 4 * 16 * 4);
}

TEST(Plan, CheckpointingKeepsOnlyLayerInputs) {
    RunConfig c = cpu_run("full");
    c.data.block_size = 512;  // activations dominate
    const Plan off = plan_of(c);
    c.training.gradient_checkpointing = true;
    const Plan on = plan_of(c);
    EXPECT_EQ(on.checkpointed_activation_bytes_per_layer, 4 * 2 * 512 * 64);
    EXPECT_LT(on.breakdown.activations, off.breakdown.activations);
    EXPECT_GT(on.flops_per_step, off.flops_per_step);  // the layers' forward runs again
}

TEST(Plan, ShardedSlicesArePaddedPerUnitAndBuffer) {
    // 3 GPUs, full training: embed 64000 -> 64002 / 3 = 21334; each layer decay 36864 / 3 = 12288 and no
    // decay 128 -> 129 / 3 = 43; head: norm 64 -> 66 / 3 = 22, lm_head 21334. Slice total 67352.
    RunConfig c = cpu_run("full");
    c.slurm.gpus_per_node = 3;
    c.distributed.sharding = "full";
    const Plan p = plan_of(c);
    EXPECT_EQ(p.world_size, 3);
    EXPECT_EQ(p.breakdown.weights, 4 * 67352);
    EXPECT_EQ(p.breakdown.optimizer_states, 8 * 67352);
    // In backward, the slices' gradients plus autograd's full-size gradients of one unit.
    EXPECT_GE(p.breakdown.gradients, 4 * 67352 + 4 * 36992);
    // The largest unit is the head (66 + 64002 padded elements): two gathered at once on NCCL (prefetch),
    // plus its full gradient in backward.
    EXPECT_EQ(p.peak_phase, "backward");
    EXPECT_EQ(p.breakdown.gathered_units, 3 * 4 * 64068);
}

TEST(Plan, ShardedQloraSlicesTheNf4StorageWithItsLayer) {
    // QLoRA without double quantization: a layer's 36864 linear weights are 18432 bytes of codes (a uint8
    // buffer: 18432 / 3 = 6144) and 576 fp32 absmax beside its norms (576 + 128 = 704 -> 705 / 3 = 235);
    // adapters 896 -> 897 / 3 = 299. Embeddings 64000 -> 21334; head (frozen) 64064 -> 64065 / 3 = 21355.
    RunConfig c = cpu_run("qlora");
    c.adapter.bnb_4bit_use_double_quant = false;
    c.slurm.gpus_per_node = 3;
    c.distributed.sharding = "full";
    const Plan sharded = plan_of(c);
    EXPECT_EQ(sharded.breakdown.weights, 4 * (21334 + 2 * (235 + 299) + 21355) + 2 * 6144);
    c.distributed.sharding = "none";
    c.slurm.gpus_per_node = 1;
    const Plan whole = plan_of(c);
    EXPECT_EQ(whole.breakdown.weights, 4 * (202048 + 1792 - 2 * 36864) + 2 * (18432 + 4 * 576));
    EXPECT_EQ(sharded.parameters, whole.parameters);  // NF4 weights still count as parameters
}

TEST(Plan, ShardedCpuBuffersStayInTheMappedPool) {
    // 2 CPU ranks, full training. MappedPool keeps every buffer it gave out, at most 2 free per byte size:
    // the slices (embed 32000, per layer 18432 + 64, head 32000 + 32 = 101024 elements), which FlatAdamW
    // frees after copying them; a gathered embed/head (64000) and its full flat gradient in backward
    // (another 64000); a gathered layer (36864 + 128) and its flat gradient (the same). The head's norm
    // (64 elements, gathered and its flat gradient) reuses the layers' freed no-decay slices of that size.
    // 101024 + 2 x 64000 + 2 x 36992 = 303008.
    RunConfig c = cpu_run("full");
    c.slurm.ntasks_per_node = 2;
    c.distributed.sharding = "full";
    const Plan p = plan_of(c);
    EXPECT_EQ(p.world_size, 2);
    EXPECT_EQ(p.breakdown.gathered_units, 4 * 303008);
    // Pool mappings are outside glibc's heap: no allocator slack on them.
    const MemoryBreakdown& b = p.breakdown;
    EXPECT_LT(b.allocator_slack, (b.total() - b.runtime - b.allocator_slack - b.gathered_units) / 8);
}

TEST(Plan, FlopsAndTime) {
    // Matmul parameters: 202048 - embed 64000 - norms 2 x 128 - 64 = 137728; attention 4 x L x T x H x D
    // = 4096 per token. Full training: 6 x 137728 + 3 x 4096 = 838656 FLOPs per token; 16 tokens a step.
    const Plan p = plan_of(cpu_run("full"));
    EXPECT_EQ(p.tokens_per_step, 16);
    EXPECT_DOUBLE_EQ(p.flops_per_step, 838656.0 * 16);
    EXPECT_DOUBLE_EQ(p.step_seconds, p.flops_per_step / (p.peak_flops_per_device * p.mfu));
    ASSERT_TRUE(p.total_seconds.has_value());
    EXPECT_DOUBLE_EQ(*p.total_seconds, 10 * p.step_seconds);
}

TEST(Plan, TooBigSaysWhyAndWhatWouldFit) {
    // 70B-like shape on 8 x A100 40GB, full training, unsharded: 16 bytes per parameter cannot fit.
    model::LlamaConfig m = small_model();
    m.hidden_size = 8192;
    m.intermediate_size = 28672;
    m.num_hidden_layers = 8;
    m.num_attention_heads = 64;
    m.num_key_value_heads = 8;
    m.head_dim = 128;
    RunConfig c = cpu_run("full");
    c.slurm.gpus_per_node = 8;
    c.slurm.gpu_type = "a100-40gb";
    const Plan p = plan_of(c, m);
    EXPECT_FALSE(p.fits);
    EXPECT_EQ(p.device, "NVIDIA A100 40GB (SXM)");
    EXPECT_NE(p.reason.find("weights"), std::string::npos) << p.reason;
    EXPECT_NE(p.reason.find("/distributed/sharding: full"), std::string::npos) << p.reason;
}

TEST(Plan, UnknownGpuIsAnError) {
    RunConfig c = cpu_run("full");
    c.slurm.gpus_per_node = 1;
    c.slurm.gpu_type = "tpu-v5";
    EXPECT_FALSE(make_plan(c, small_model(), host()).ok());
}

TEST(Plan, JsonHasTheContractKeys) {
    const nlohmann::ordered_json j = to_json(plan_of(cpu_run("lora")));
    for (const char* key : {"per_device_bytes", "device_bytes", "fits", "breakdown", "step_seconds",
                            "total_seconds", "tokens_per_step", "reason"})
        EXPECT_TRUE(j.contains(key)) << key;
    for (const char* key : {"weights", "gradients", "optimizer_states", "activations", "logits_and_loss",
                            "gathered_units", "communication", "runtime", "allocator_slack"})
        EXPECT_TRUE(j["breakdown"].contains(key)) << key;
}

}  // namespace
}  // namespace slipway::plan
