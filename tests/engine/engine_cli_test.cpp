// slipway-engine's config commands, run as a process: exit codes, the problems they print, and the JSON
// they produce from presets and from the seed-style flags.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace {

struct ProcessResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs slipway-engine with `args` (already shell-quoted by the caller; test paths have no quotes).
ProcessResult engine(const std::string& args) {
    // One pair of files per test: ctest runs tests in parallel.
    const std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    const std::string out = testing::TempDir() + "/engine_cli_" + name + ".out";
    const std::string err = testing::TempDir() + "/engine_cli_" + name + ".err";
    const std::string command = std::string(SLIPWAY_ENGINE_BIN) + " " + args + " >" + out + " 2>" + err;
    const int status = std::system(command.c_str());
    ProcessResult run;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = read_file(out);
    run.err = read_file(err);
    return run;
}

const std::string kPresets = std::string(SLIPWAY_SOURCE_DIR) + "/resources/presets";

TEST(EngineCli, Version) {
    const ProcessResult run = engine("--version");
    EXPECT_EQ(run.exit_code, 0);
    EXPECT_EQ(run.out.rfind("slipway-engine ", 0), 0u) << run.out;
}

TEST(EngineCli, ValidateAllPresets) {
    const ProcessResult run = engine("config validate " + kPresets + "/*.json");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("mlperf-llama2-70b-lora.json: ok (world size 8, global batch 8 sequences"),
              std::string::npos)
        << run.out;
    EXPECT_EQ(run.err, "");
}

TEST(EngineCli, ValidateListsEveryProblemAndFails) {
    const std::string path = testing::TempDir() + "/bad_run.json";
    std::ofstream(path) << R"({"model": {"path": "/m"}, "data": {"train_file": "t"},
        "training": {"learning_rate": -1, "lr_scheduler": "cosine"}, "slurm": {"time": "forever"}})";
    const ProcessResult run = engine("config validate " + path + " " + kPresets + "/demo-tiny.json");
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find(path + ": /training/learning_rate: must be > 0, got -1"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(path + ": /training/lr_scheduler: unknown field (did you mean \"lr_scheduler_type\"?)"),
              std::string::npos)
        << run.err;
    EXPECT_NE(run.err.find(path + ": /slurm/time: must be minutes"), std::string::npos) << run.err;
    EXPECT_NE(run.out.find("demo-tiny.json: ok"), std::string::npos) << "the other file is still checked";
}

TEST(EngineCli, ValidateMissingFileFails) {
    const ProcessResult run = engine("config validate /nonexistent/run.json");
    EXPECT_NE(run.exit_code, 0);
    EXPECT_NE(run.err.find("/nonexistent/run.json"), std::string::npos) << run.err;
}

TEST(EngineCli, PrintFillsDefaults) {
    const std::string path = testing::TempDir() + "/small_run.json";
    std::ofstream(path) << R"({"name": "small", "model": {"path": "/m"}, "data": {"train_file": "t.jsonl"}})";
    const ProcessResult run = engine("config print " + path);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json printed = nlohmann::json::parse(run.out);
    EXPECT_EQ(printed["name"], "small");
    EXPECT_EQ(printed["training"]["learning_rate"], 5e-5);
    EXPECT_EQ(printed["adapter"]["target_modules"], nlohmann::json({"q_proj", "v_proj"}));
    EXPECT_TRUE(printed["training"]["max_steps"].is_null());
    EXPECT_EQ(printed["distributed"]["bucket_mb"], 25.0);
}

TEST(EngineCli, FromArgsBuildsTheSeedRun) {
    const ProcessResult run = engine(
        "config from-args -- --model_name_or_path /models/llama --train_file /data/train.jsonl --block_size 4096 "
        "--learning_rate 1e-4 --weight_decay 0.1 --adam_beta2 0.95 --lr_scheduler_type cosine --warmup_steps 100 "
        "--bf16 --gradient_accumulation_steps 4 --peft True --lora_rank 32 --trainable q_proj,v_proj --do_train");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json printed = nlohmann::json::parse(run.out);
    EXPECT_EQ(printed["model"]["path"], "/models/llama");
    EXPECT_EQ(printed["data"]["block_size"], 4096);
    EXPECT_EQ(printed["training"]["learning_rate"], 1e-4);
    EXPECT_EQ(printed["training"]["bf16"], true);
    EXPECT_EQ(printed["adapter"]["r"], 32);
    EXPECT_EQ(printed["adapter"]["target_modules"], nlohmann::json({"q_proj", "v_proj"}));
    EXPECT_NE(run.err.find("note: --do_train ignored"), std::string::npos) << run.err;
}

TEST(EngineCli, FromArgsRejectsBadFlags) {
    const ProcessResult run = engine("config from-args -- --learning_rate fast --lora_rnk 8");
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find("--learning_rate: expected a number, got \"fast\""), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("--lora_rnk: unknown flag (did you mean --lora_rank?)"), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "");
}

TEST(EngineCli, SchemaDocumentsFieldsAndFlags) {
    const ProcessResult run = engine("config schema");
    ASSERT_EQ(run.exit_code, 0);
    EXPECT_NE(run.out.find("| `/slurm/gpus_per_node` | integer | `1` |"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("| `--lora_rank` | `/adapter/r` |"), std::string::npos);
}

}  // namespace
