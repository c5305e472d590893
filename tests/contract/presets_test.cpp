// The shipped presets (resources/presets): each is valid, says where it comes from, and carries the
// values of the seed job it reproduces.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "contract/run_config.h"
#include "test_paths.h"

namespace slipway {
namespace {

const std::string kPresetDir = std::string(test_paths::source_dir("/resources/presets"));

RunConfig load_preset(const std::string& name) {
    const Result<RunConfig> loaded = load_run_config(kPresetDir + "/" + name + ".json");
    EXPECT_TRUE(loaded.ok()) << loaded.error();
    return loaded.ok() ? *loaded : RunConfig{};
}

TEST(Presets, AllAreValidAndCommented) {
    size_t count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kPresetDir)) {
        if (entry.path().extension() != ".json") continue;
        ++count;
        const Result<nlohmann::json> json = read_json_file(entry.path().string());
        ASSERT_TRUE(json.ok()) << json.error();
        const ParsedRunConfig parsed = parse_run_config(*json);
        EXPECT_TRUE(parsed.problems.empty()) << entry.path() << "\n" << format_problems(parsed.problems);
        const ConfigProblems problems = validate(parsed.config);
        EXPECT_TRUE(problems.empty()) << entry.path() << "\n" << format_problems(problems);
        EXPECT_GT(parsed.config.comment.size(), 40u) << entry.path() << ": say where the preset comes from";
        EXPECT_EQ(parsed.config.name, entry.path().stem().string());
    }
    EXPECT_GE(count, 5u);
}

// In a container the job sees only the image and the mounts: every absolute input and output path must lie
// under a mount's container side (the run folder that deployment mounts is not known here).
TEST(Presets, ContainerPathsLieUnderTheDeclaredMounts) {
    size_t checked = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kPresetDir)) {
        if (entry.path().extension() != ".json") continue;
        const RunConfig c = load_preset(entry.path().stem().string());
        if (c.slurm.container_image.empty()) continue;
        std::vector<std::string> inside;  // "dst" of "src:dst[:flags]", or "src" mounted at itself
        for (const std::string& mount : c.slurm.container_mounts) {
            const size_t colon = mount.find(':');
            const std::string dst = colon == std::string::npos ? mount : mount.substr(colon + 1);
            inside.push_back(dst.substr(0, dst.find(':')));
        }
        const std::pair<const char*, std::string> paths[] = {
            {"/model/path", c.model.path},           {"/tokenizer/path", c.tokenizer.path},
            {"/data/train_file", c.data.train_file}, {"/data/validation_file", c.data.validation_file},
            {"/data/cache_dir", c.data.cache_dir},   {"/training/output_dir", c.training.output_dir}};
        for (const auto& [pointer, path] : paths) {
            if (path.empty() || path[0] != '/') continue;
            bool mounted = false;
            for (const std::string& dst : inside)
                mounted = mounted || path == dst || path.rfind(dst + "/", 0) == 0;
            EXPECT_TRUE(mounted) << entry.path().filename() << pointer << " = " << path
                                 << " is under no container mount";
            ++checked;
        }
    }
    EXPECT_GE(checked, 8u);
}

TEST(Presets, RuadaptLoraIsTheSeedScript) {
    const RunConfig c = load_preset("ruadapt-lora");
    EXPECT_EQ(c.data.block_size, 4096);
    EXPECT_DOUBLE_EQ(c.training.weight_decay, 0.1);
    EXPECT_DOUBLE_EQ(c.training.adam_beta1, 0.9);
    EXPECT_DOUBLE_EQ(c.training.adam_beta2, 0.95);
    EXPECT_DOUBLE_EQ(c.training.adam_epsilon, 1e-5);
    EXPECT_EQ(c.training.lr_scheduler_type, "cosine");
    EXPECT_EQ(c.training.warmup_steps, 100);
    EXPECT_TRUE(c.training.bf16);
    EXPECT_EQ(c.training.gradient_accumulation_steps, 4);
    EXPECT_EQ(c.slurm.nodes, 8);
    EXPECT_EQ(c.slurm.gpus_per_node, 8);
    EXPECT_EQ(c.adapter.method, "lora");
    EXPECT_EQ(c.global_batch_size(), 256);
}

TEST(Presets, RuadaptEmbeddingsTrainsOnlyEmbeddings) {
    const RunConfig c = load_preset("ruadapt-embeddings");
    EXPECT_EQ(c.adapter.method, "embeddings");
    EXPECT_EQ(c.data.block_size, 4096);
    EXPECT_EQ(c.world_size(), 64);
}

TEST(Presets, MlperfLlama2LoraMatchesTheReference) {
    const RunConfig c = load_preset("mlperf-llama2-70b-lora");
    EXPECT_DOUBLE_EQ(c.training.learning_rate, 4e-4);
    EXPECT_EQ(c.training.lr_scheduler_type, "cosine");
    EXPECT_DOUBLE_EQ(c.training.weight_decay, 1e-4);
    EXPECT_EQ(c.training.warmup_steps, 0);
    EXPECT_DOUBLE_EQ(c.training.max_grad_norm, 0.3);
    EXPECT_EQ(c.adapter.r, 16);
    EXPECT_DOUBLE_EQ(c.adapter.lora_alpha, 32);
    EXPECT_DOUBLE_EQ(c.adapter.lora_dropout, 0.1);
    EXPECT_EQ(c.data.block_size, 8192);
    EXPECT_EQ(c.training.max_steps, 1024);
    EXPECT_EQ(c.training.eval_steps, 48);
    EXPECT_EQ(c.eval.metric, "loss");
    EXPECT_EQ(c.eval.target, 0.925);
    EXPECT_TRUE(c.eval.stop_at_target);
    EXPECT_EQ(c.slurm.nodes, 1);
    EXPECT_EQ(c.slurm.gpus_per_node, 8);
    EXPECT_EQ(c.global_batch_size(), 8);
    // A closed-division submission log: the keys of the mlcommons compliance checker, training 4.0.0.
    EXPECT_EQ(c.mlperf.benchmark, "llama2_70b_lora");
    EXPECT_EQ(c.mlperf.division, "closed");
    EXPECT_EQ(c.mlperf.status, "onprem");
    EXPECT_FALSE(c.mlperf.org.empty());
    EXPECT_FALSE(c.mlperf.platform.empty());
}

TEST(Presets, DemoTinyRunsOnCpus) {
    const RunConfig c = load_preset("demo-tiny");
    EXPECT_EQ(c.slurm.gpus_per_node, 0);
    EXPECT_EQ(c.distributed.backend, "gloo");
    EXPECT_EQ(c.adapter.method, "full");
    EXPECT_LE(c.data.block_size, 256);
}

}  // namespace
}  // namespace slipway
