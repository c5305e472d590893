// Seed-style training flags onto RunConfig: the typical script of seed 000, argparse abbreviations,
// boolean forms, and errors that name the flag.
#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>

#include "contract/hf_flags.h"

namespace slipway {
namespace {

// The flags of the typical script at the end of seed 000, with the shell variables given values.
const std::vector<std::string> kSeedScript = {"--model_name_or_path",
                                              "/scratch/models/llama3-8b",
                                              "--train_file",
                                              "/scratch/data/train.jsonl",
                                              "--validation_file",
                                              "/scratch/tikhomirov/workdir/data/darulm_20_05_24/val.json",
                                              "--block_size",
                                              "4096",
                                              "--preprocessing_num_workers",
                                              "96",
                                              "--output_dir",
                                              "/scratch/out",
                                              "--overwrite_output_dir",
                                              "--do_train",
                                              "--do_eval",
                                              "--evaluation_strategy",
                                              "steps",
                                              "--per_device_train_batch_size",
                                              "1",
                                              "--per_device_eval_batch_size",
                                              "1",
                                              "--learning_rate",
                                              "2e-4",
                                              "--weight_decay",
                                              "0.1",
                                              "--adam_beta1",
                                              "0.9",
                                              "--adam_beta2",
                                              "0.95",
                                              "--adam_epsilon",
                                              "1e-05",
                                              "--num_train_epochs",
                                              "1.0",
                                              "--lr_scheduler_type",
                                              "cosine",
                                              "--warmup_steps",
                                              "100",
                                              "--save_step",
                                              "10000",
                                              "--logging_steps",
                                              "10",
                                              "--save_total_limit",
                                              "8",
                                              "--bf16",
                                              "--bf16_full_eval",
                                              "--torch_dtype",
                                              "bfloat16",
                                              "--gradient_accumulation_steps",
                                              "4",
                                              "--eval_steps",
                                              "1000",
                                              "--log_on_each_node",
                                              "false",
                                              "--peft",
                                              "True",
                                              "--lora_rank",
                                              "32",
                                              "--lora_alpha",
                                              "128",
                                              "--trainable",
                                              "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj",
                                              "--lora_dropout",
                                              "0.05",
                                              "--modules_to_save",
                                              "embed_tokens,lm_head"};

TEST(HfFlags, SeedScriptMapsOntoEveryField) {
    RunConfig c;
    const Result<FlagReport> report = apply_hf_flags(c, kSeedScript);
    ASSERT_TRUE(report.ok()) << report.error();
    EXPECT_EQ(c.model.path, "/scratch/models/llama3-8b");
    EXPECT_EQ(c.model.dtype, "bfloat16");
    EXPECT_EQ(c.data.train_file, "/scratch/data/train.jsonl");
    EXPECT_EQ(c.data.validation_file, "/scratch/tikhomirov/workdir/data/darulm_20_05_24/val.json");
    EXPECT_EQ(c.data.block_size, 4096);
    EXPECT_EQ(c.data.preprocessing_num_workers, 96);
    EXPECT_EQ(c.training.output_dir, "/scratch/out");
    EXPECT_TRUE(c.training.overwrite_output_dir);
    EXPECT_EQ(c.training.per_device_train_batch_size, 1);
    EXPECT_EQ(c.training.per_device_eval_batch_size, 1);
    EXPECT_DOUBLE_EQ(c.training.learning_rate, 2e-4);
    EXPECT_DOUBLE_EQ(c.training.weight_decay, 0.1);
    EXPECT_DOUBLE_EQ(c.training.adam_beta1, 0.9);
    EXPECT_DOUBLE_EQ(c.training.adam_beta2, 0.95);
    EXPECT_DOUBLE_EQ(c.training.adam_epsilon, 1e-5);
    EXPECT_DOUBLE_EQ(c.training.num_train_epochs, 1.0);
    EXPECT_EQ(c.training.lr_scheduler_type, "cosine");
    EXPECT_EQ(c.training.warmup_steps, 100);
    EXPECT_EQ(c.training.save_steps, 10000);  // "--save_step" is argparse's abbreviation of --save_steps
    EXPECT_EQ(c.training.logging_steps, 10);
    EXPECT_EQ(c.training.save_total_limit, 8);
    EXPECT_TRUE(c.training.bf16);
    EXPECT_EQ(c.training.gradient_accumulation_steps, 4);
    EXPECT_EQ(c.training.eval_steps, 1000);
    EXPECT_EQ(c.adapter.method, "lora");
    EXPECT_EQ(c.adapter.r, 32);
    EXPECT_DOUBLE_EQ(c.adapter.lora_alpha, 128);
    EXPECT_DOUBLE_EQ(c.adapter.lora_dropout, 0.05);
    EXPECT_EQ(c.adapter.target_modules, (std::vector<std::string>{"q_proj", "k_proj", "v_proj", "o_proj",
                                                                  "gate_proj", "up_proj", "down_proj"}));
    EXPECT_EQ(c.adapter.modules_to_save, (std::vector<std::string>{"embed_tokens", "lm_head"}));
    // do_train, do_eval, bf16_full_eval and log_on_each_node are accepted and explained; --torch_dtype
    // bfloat16 says where the frozen base is held in bf16 (/model/base_dtype auto).
    EXPECT_EQ(c.model.base_dtype, "auto");
    EXPECT_EQ(report->notes.size(), 5u);
    EXPECT_EQ(report->notes[0], "--do_train ignored: training always runs");
    EXPECT_EQ(std::count_if(
                  report->notes.begin(), report->notes.end(),
                  [](const std::string& n) { return n.find("/model/base_dtype auto") != std::string::npos; }),
              1);
}

TEST(HfFlags, PeftFalseMeansEmbeddingsOnly) {
    RunConfig c;
    ASSERT_TRUE(apply_hf_flags(c, {"--peft", "False", "--modules_to_save", "None"}).ok());
    EXPECT_EQ(c.adapter.method, "embeddings");
    EXPECT_TRUE(c.adapter.modules_to_save.empty());
}

TEST(HfFlags, EqualsFormDashesAndBooleanWords) {
    RunConfig c;
    ASSERT_TRUE(apply_hf_flags(c, {"--learning-rate=3e-4", "--bf16", "false", "--gradient_checkpointing=True",
                                   "--max_steps", "-1", "--save_total_limit", "None"})
                    .ok());
    EXPECT_DOUBLE_EQ(c.training.learning_rate, 3e-4);
    EXPECT_FALSE(c.training.bf16);
    EXPECT_TRUE(c.training.gradient_checkpointing);
    EXPECT_FALSE(c.training.max_steps.has_value());
    EXPECT_FALSE(c.training.save_total_limit.has_value());
}

// Seed 004 trains with --report-to=wandb: its import keeps going, and says what is not written.
TEST(HfFlags, ReportToKeepsTheTrackersTheEngineWritesAndNotesTheRest) {
    RunConfig c;
    Result<FlagReport> seed = apply_hf_flags(c, {"--report-to=wandb"});
    ASSERT_TRUE(seed.ok()) << seed.error();
    EXPECT_EQ(c.training.report_to, std::vector<std::string>{"tensorboard"});
    ASSERT_EQ(seed->notes.size(), 1U);
    EXPECT_EQ(seed->notes[0],
              "--report_to wandb ignored: the engine does not write wandb runs (its metrics go to "
              "mllog.txt and TensorBoard)");
    ASSERT_TRUE(
        apply_hf_flags(c, {"--report_to", "tensorboard,mlflow,wandb", "--logging_dir", "/logs/a"}).ok());
    EXPECT_EQ(c.training.report_to, (std::vector<std::string>{"tensorboard", "mlflow"}));
    EXPECT_EQ(c.training.logging_dir, "/logs/a");
    ASSERT_TRUE(apply_hf_flags(c, {"--report_to", "none"}).ok());
    EXPECT_EQ(c.training.report_to, std::vector<std::string>{"none"});
}

TEST(HfFlags, EvaluationStrategyNoClearsEvalSteps) {
    RunConfig c;
    c.training.eval_steps = 10;
    ASSERT_TRUE(apply_hf_flags(c, {"--evaluation_strategy", "no"}).ok());
    EXPECT_FALSE(c.training.eval_steps.has_value());
    const Result<FlagReport> epoch = apply_hf_flags(c, {"--eval_strategy", "epoch"});
    ASSERT_FALSE(epoch.ok());
    EXPECT_EQ(epoch.error(), "--eval_strategy: only \"steps\" and \"no\" are supported, got \"epoch\"");
}

TEST(HfFlags, AValueThatIsNotUtf8NamesItsFlag) {
    // Values end up as JSON strings; nlohmann's dump throws on invalid UTF-8 (found by fuzz_run_config).
    RunConfig c;
    Result<FlagReport> spaced = apply_hf_flags(c, {"--learning_rate", "1e-4", "--run_name", "a\xff"});
    ASSERT_FALSE(spaced.ok());
    EXPECT_EQ(spaced.error(), "--run_name: the value is not valid UTF-8 text (argument 4)");
    Result<FlagReport> equals = apply_hf_flags(c, {"--run_name=\xC0\xAF"});
    ASSERT_FALSE(equals.ok());
    EXPECT_EQ(equals.error(), "--run_name: the value is not valid UTF-8 text (argument 1)");
    Result<FlagReport> alone = apply_hf_flags(c, {"\xff"});
    ASSERT_FALSE(alone.ok());
    EXPECT_EQ(alone.error(), "argument 1 is not valid UTF-8 text");
}

TEST(HfFlags, RankPatternFromFile) {
    const std::string path = testing::TempDir() + "/rank_pattern.json";
    std::ofstream(path) << R"({"layers.0.self_attn.q_proj": 64})";
    RunConfig c;
    ASSERT_TRUE(apply_hf_flags(c, {"--rank_pattern_path", path}).ok());
    EXPECT_EQ(c.adapter.rank_pattern.at("layers.0.self_attn.q_proj"), 64);
}

TEST(HfFlags, EveryBadFlagIsReportedByName) {
    RunConfig c;
    const Result<FlagReport> report =
        apply_hf_flags(c, {"--learnin_rate", "1e-4", "--block_size", "big", "--lora_rank", "4.5", "--fp16",
                           "--bf16=maybe", "--save", "10", "--output_dir", "--wat", "1", "stray"});
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.error(),
              "--learnin_rate: unknown flag (did you mean --learning_rate?)\n"
              "--block_size: expected a number, got \"big\"\n"
              "--lora_rank: expected an integer, got \"4.5\"\n"
              "--fp16: fp16 training is not supported: use --bf16\n"
              "--bf16: expected true or false, got \"maybe\"\n"
              "--save: ambiguous, could be --save_steps --save_total_limit --save_strategy\n"
              "--output_dir: needs a value\n"
              "--wat: unknown flag\n"
              "\"stray\": expected a flag like --learning_rate");
}

TEST(HfFlags, UnsupportedFlagsSayWhatToDoInstead) {
    RunConfig c;
    const Result<FlagReport> report = apply_hf_flags(c, {"--fp16", "True", "--dataset_name", "wikitext"});
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.error(),
              "--fp16: fp16 training is not supported: use --bf16\n"
              "--dataset_name: datasets are not downloaded: give --train_file (JSONL)");
}

TEST(HfFlags, EveryDirectFlagTargetsARealField) {
    for (const HfFlag& f : hf_flags()) {
        EXPECT_FALSE(f.help.empty()) << f.name;
        EXPECT_FALSE(f.target.empty()) << f.name;
    }
}

// The editor shows the seed's name of a field next to its label.
TEST(HfFlags, FlagForAFieldPrefersTheDirectOne) {
    EXPECT_EQ(hf_flag_for("/adapter/r"), "lora_rank");
    EXPECT_EQ(hf_flag_for("/training/eval_steps"), "eval_steps");  // not evaluation_strategy
    EXPECT_EQ(hf_flag_for("/adapter/method"), "peft");
    EXPECT_EQ(hf_flag_for("/slurm/nodes"), "");
}

}  // namespace
}  // namespace slipway
