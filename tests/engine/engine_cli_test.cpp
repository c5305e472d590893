// slipway-engine's config commands, run as a process: exit codes, the problems they print, and the JSON
// they produce from presets and from the seed-style flags.
#include <gtest/gtest.h>
#include "test_paths.h"

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
    const std::string command = std::string(test_paths::engine_bin()) + " " + args + " >" + out + " 2>" + err;
    const int status = std::system(command.c_str());
    ProcessResult run;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = read_file(out);
    run.err = read_file(err);
    return run;
}

const std::string kPresets = std::string(test_paths::source_dir("/resources/presets"));

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
    EXPECT_NE(run.err.find(path + ": /training/learning_rate: must be > 0, got -1"), std::string::npos)
        << run.err;
    EXPECT_NE(
        run.err.find(path + ": /training/lr_scheduler: unknown field (did you mean \"lr_scheduler_type\"?)"),
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
        "config from-args -- --model_name_or_path /models/llama --train_file /data/train.jsonl --block_size "
        "4096 "
        "--learning_rate 1e-4 --weight_decay 0.1 --adam_beta2 0.95 --lr_scheduler_type cosine --warmup_steps "
        "100 "
        "--bf16 --gradient_accumulation_steps 4 --peft True --lora_rank 32 --trainable q_proj,v_proj "
        "--do_train");
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
    EXPECT_NE(run.err.find("--lora_rnk: unknown flag (did you mean --lora_rank?)"), std::string::npos)
        << run.err;
    EXPECT_EQ(run.out, "");
}

TEST(EngineCli, SchemaDocumentsFieldsAndFlags) {
    const ProcessResult run = engine("config schema");
    ASSERT_EQ(run.exit_code, 0);
    EXPECT_NE(run.out.find("| `/slurm/gpus_per_node` | integer | `1` |"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("| `--lora_rank` | `/adapter/r` |"), std::string::npos);
}

}  // namespace

namespace {

const std::string kDemoTokenizer = std::string(test_paths::source_dir("/resources/demo/tokenizer.json"));

std::string write_temp(const std::string& name, const std::string& content) {
    const std::string path = testing::TempDir() + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

std::vector<std::vector<int>> ids_of(const std::string& jsonl) {
    std::vector<std::vector<int>> out;
    std::istringstream in(jsonl);
    std::string line;
    while (std::getline(in, line))
        out.push_back(nlohmann::json::parse(line)["ids"].get<std::vector<int>>());
    return out;
}

TEST(EngineCliTokenize, KeepsInputOrderWithManyThreadsAndRoundTrips) {
    std::string input;
    for (int i = 0; i < 9000; ++i)
        input += nlohmann::json{{"text", "строка " + std::to_string(i) + " line"}}.dump() + "\n";
    const std::string in = write_temp("tokenize_in.jsonl", input);
    const ProcessResult one = engine("tokenize --threads 1 --tokenizer " + kDemoTokenizer + " < " + in);
    const ProcessResult four = engine("tokenize --threads 4 --tokenizer " + kDemoTokenizer + " < " + in);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(one.out, four.out);
    ASSERT_EQ(ids_of(one.out).size(), 9000u);
    const std::string ids = write_temp("tokenize_ids.jsonl", one.out);
    const ProcessResult decoded = engine("tokenize --decode --tokenizer " + kDemoTokenizer + " < " + ids);
    ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
    std::istringstream lines(decoded.out);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(nlohmann::json::parse(line)["text"], "строка 0 line");
}

TEST(EngineCliTokenize, BadLineNamesItsNumber) {
    const std::string in =
        write_temp("tokenize_bad.jsonl", "{\"text\": \"ok\"}\n{\"text\": 5}\n{broken\n{\"body\": \"x\"}\n");
    const ProcessResult strict = engine("tokenize --tokenizer " + kDemoTokenizer + " < " + in);
    EXPECT_EQ(strict.exit_code, 1);
    EXPECT_EQ(strict.err, "stdin:2: field \"text\" is not a string\n");
    const ProcessResult lenient = engine("tokenize --skip-bad --tokenizer " + kDemoTokenizer + " < " + in);
    EXPECT_EQ(lenient.exit_code, 0);
    EXPECT_EQ(ids_of(lenient.out).size(), 1u);
    EXPECT_NE(lenient.err.find("stdin:3: skipped: invalid JSON"), std::string::npos) << lenient.err;
    EXPECT_NE(lenient.err.find("stdin:4: skipped: missing field \"text\""), std::string::npos) << lenient.err;
    EXPECT_NE(lenient.err.find("skipped 3 bad line(s) of 4"), std::string::npos) << lenient.err;
}

TEST(EngineCliTokenize, OtherFieldAndSpecialTokens) {
    const std::string in = write_temp("tokenize_field.jsonl", "{\"body\": \"hi\"}\n");
    const ProcessResult run =
        engine("tokenize --field body --add-special-tokens --tokenizer " + kDemoTokenizer + " < " + in);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::vector<std::vector<int>> ids = ids_of(run.out);
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_EQ(ids[0].front(), 4093);  // <|begin_of_text|>: the demo tokenizer's first special token
}

TEST(EngineCliTokenizer, TrainWritesATokenizerThatEncodes) {
    const std::string out = testing::TempDir() + "/trained_cli.json";
    const ProcessResult run = engine("tokenizer train --corpus " + std::string(test_paths::source_dir()) +
                                     "/tests/data/tokenizer/corpus.jsonl --vocab-size 600 --out " + out);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("600 tokens"), std::string::npos) << run.out;
    const std::string in = write_temp("trained_in.jsonl", "{\"text\": \"hello hello\"}\n");
    const ProcessResult encoded = engine("tokenize --tokenizer " + out + " < " + in);
    ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
    EXPECT_FALSE(ids_of(encoded.out)[0].empty());
}

TEST(EngineCliTokenizer, TrainNamesTheBadLine) {
    const std::string corpus = write_temp("train_bad.jsonl", "{\"text\": \"a\"}\n\n{\"text\": [1]}\n");
    const ProcessResult run =
        engine("tokenizer train --corpus " + corpus + " --vocab-size 300 --out /tmp/never.json");
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find(corpus + ":3: field \"text\" is not a string"), std::string::npos) << run.err;
}

// Issue 17: extend keeps the demo tokenizer's ids and adds after its specials; train --type unigram runs
// SentencePiece in slipway-tokenizer; stats prints the table and JSON; bad lines are named.
const std::string kDemo = std::string(test_paths::source_dir("/resources/demo"));

TEST(EngineCliTokenizer, ExtendAddsAfterTheSpecialTokens) {
    const std::string out = testing::TempDir() + "/extended_cli.json";
    const ProcessResult run = engine("tokenizer extend --base " + kDemo + "/tokenizer.json --corpus " +
                                     kDemo + "/corpus.jsonl --add 50 --out " + out);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    // The demo tokenizer's specials sit at 4093..4095.
    EXPECT_NE(run.out.find("50 new tokens (ids 4096..4145), 50 new merges"), std::string::npos) << run.out;
    const std::string in = write_temp("extended_in.jsonl", "{\"text\": \"<|begin_of_text|>Привет\"}\n");
    const ProcessResult encoded = engine("tokenize --tokenizer " + out + " < " + in);
    ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
    EXPECT_EQ(ids_of(encoded.out)[0].front(), 4093);
}

TEST(EngineCliTokenizer, ExtendNamesTheBadLine) {
    const std::string corpus = write_temp("extend_bad.jsonl", "{\"text\": \"a\"}\n{\"text\": 1}\n");
    const ProcessResult run = engine("tokenizer extend --base " + kDemo + "/tokenizer.json --corpus " +
                                     corpus + " --add 5 --out /tmp/never.json");
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find(corpus + ":2: field \"text\" is not a string"), std::string::npos) << run.err;
}

TEST(EngineCliTokenizer, TrainUnigramWritesAUnigramTokenizer) {
#ifndef SLIPWAY_HAVE_UNIGRAM_TRAINER
    GTEST_SKIP() << "built without libsentencepiece-dev (packaging/install-deps.sh installs it)";
#endif
    const std::string out = testing::TempDir() + "/unigram_cli.json";
    const ProcessResult run = engine("tokenizer train --type unigram --corpus " + kDemo +
                                     "/corpus.jsonl --vocab-size 1000 --out " + out);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("Unigram, 1000 pieces"), std::string::npos) << run.out;
    const nlohmann::json json = nlohmann::json::parse(read_file(out));
    EXPECT_EQ(json["model"]["type"], "Unigram");
    EXPECT_EQ(json["model"]["vocab"][0][0], "<unk>");
    EXPECT_EQ(json["pre_tokenizer"]["type"], "Metaspace");
}

TEST(EngineCliTokenizer, StatsComparesTokenizersSideBySide) {
    const std::string corpus =
        write_temp("stats.jsonl", "{\"text\": \"Привет, мир!\"}\n{\"text\": \"hello world\"}\n");
    const ProcessResult json = engine("tokenizer stats --json --corpus " + corpus + " --tokenizer " + kDemo +
                                      "/tokenizer.json --tokenizer " + kDemo + "/tokenizer.json");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const nlohmann::json stats = nlohmann::json::parse(json.out);
    ASSERT_EQ(stats.size(), 2u);
    EXPECT_EQ(stats[0]["documents"], 2);
    EXPECT_EQ(stats[0]["characters"], 23);
    EXPECT_EQ(stats[0]["words"], 4);
    EXPECT_EQ(stats[0]["tokens"], stats[1]["tokens"]);
    EXPECT_DOUBLE_EQ(stats[0]["chars_per_token"].get<double>(), 23.0 / stats[0]["tokens"].get<double>());
    const ProcessResult table =
        engine("tokenizer stats --corpus " + corpus + " --tokenizer " + kDemo + "/tokenizer.json");
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("chars per token"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("(2 documents, 23 characters, 4 words)"), std::string::npos) << table.out;
}

// `slipway-engine plan`: the MLPerf Llama-2-70B LoRA preset on 8 x H100 80GB fits with sharding full and
// gradient checkpointing and does not without sharding (issue 12's verdicts), the table, and the hint when
// the model's config.json is not on this computer.
const std::string kLoraPreset = kPresets + "/mlperf-llama2-70b-lora.json";
const std::string kLlama70b = std::string(test_paths::source_dir("/tests/data/llama2-70b/config.json"));

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(PlanCli, Llama70bLoraPresetFitsOnEightH100WithFullSharding) {
    const ProcessResult run = engine("plan " + kLoraPreset + " --model-config " + kLlama70b + " --json");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json plan = nlohmann::json::parse(run.out);
    EXPECT_EQ(plan["sharding"], "full");
    EXPECT_TRUE(plan["gradient_checkpointing"].get<bool>());
    EXPECT_EQ(plan["world_size"], 8);
    EXPECT_TRUE(plan["fits"].get<bool>()) << run.out;
    EXPECT_EQ(plan["device_bytes"].get<int64_t>(), int64_t{81559} << 20);  // H100 80GB
    const double headroom = plan["headroom_bytes"].get<double>() / kGiB;
    EXPECT_GT(headroom, 1.0) << run.out;
    EXPECT_EQ(plan["tokens_per_step"], 8 * 8192);
    EXPECT_GT(plan["total_seconds"].get<double>(), 0);
}

TEST(PlanCli, Llama70bLoraDoesNotFitUnsharded) {
    nlohmann::json preset = nlohmann::json::parse(read_file(kLoraPreset));
    preset["distributed"]["sharding"] = "none";
    const std::string path = testing::TempDir() + "/engine_cli_plan_unsharded.json";
    std::ofstream(path) << preset.dump();
    const ProcessResult run = engine("plan " + path + " --model-config " + kLlama70b + " --json");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json plan = nlohmann::json::parse(run.out);
    EXPECT_FALSE(plan["fits"].get<bool>());
    // 69B fp32 weights on every GPU, and the way out.
    EXPECT_GT(plan["breakdown"]["weights"].get<double>() / kGiB, 250.0);
    const std::string reason = plan["reason"];
    EXPECT_NE(reason.find("weights"), std::string::npos) << reason;
    EXPECT_NE(reason.find("with /distributed/sharding: full"), std::string::npos) << reason;
    EXPECT_NE(reason.find("(fits)"), std::string::npos) << reason;
}

TEST(PlanCli, TableNamesEveryPartAndTheVerdict) {
    const ProcessResult run = engine("plan " + kLoraPreset + " --model-config " + kLlama70b);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    for (const char* text : {"weights", "gradients", "optimizer states", "activations", "gathered units",
                             "CUDA context", "total", "Fits: ", "tokens per step", "MFU"})
        EXPECT_NE(run.out.find(text), std::string::npos) << text << "\n" << run.out;
}

TEST(PlanCli, MissingModelConfigNamesTheFlag) {
    const ProcessResult run = engine("plan " + kLoraPreset);  // /data/model is on the cluster
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find("--model-config"), std::string::npos) << run.err;
}

}  // namespace
