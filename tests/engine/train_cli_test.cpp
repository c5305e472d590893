// slipway-engine train, run as a process on a tiny model: loss falls and the outputs load back; the
// MLLOG obeys the MLPerf rules that apply; embeddings mode leaves every other weight bit-identical;
// k accumulated micro-batches equal one k times larger batch; a bad config or flag is refused.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "contract/log_summary.h"
#include "contract/mllog.h"
#include "io/safetensors.h"
#include "test_paths.h"
#include "tiny_run_support.h"

namespace {

using slipway::testing_support::kSource;
using slipway::testing_support::slurp;
namespace fs = std::filesystem;

class TrainCli : public slipway::testing_support::TinyRunTest {
protected:
    // `env`: variables for the engine, e.g. "SLIPWAY_FAULT_THROW_AT=0:3:oom".
    using TrainRun = EngineRun;
    TrainRun train(const std::string& args, const std::string& env = "") {
        return run_engine("train --threads 1 " + args, env);
    }

    static std::vector<slipway::MllogEvent> events(const std::string& mllog, const std::string& key = "") {
        return slipway::testing_support::mllog_events(mllog, key);
    }
};

TEST_F(TrainCli, LossFallsAndOutputsLoadBack) {
    const TrainRun run = train(write_config(
        "full", {{"training", {{"max_steps", 40}, {"learning_rate", 1e-2}, {"eval_steps", 20}}}}));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::string out = (dir_ / "full").string();
    const std::vector<slipway::MllogEvent> losses = events(out + "/mllog.txt", "train_loss");
    ASSERT_EQ(losses.size(), 40u);
    EXPECT_LT(losses.back().value.get<double>(), losses.front().value.get<double>() - 1.0);
    EXPECT_NEAR(losses.front().value.get<double>(), std::log(4096.0), 0.1);  // random init: uniform
    for (const char* file : {"config.json", "model.safetensors", "tokenizer.json", "run.json", "mllog.txt"}) {
        EXPECT_TRUE(fs::exists(out + "/" + file)) << file;
    }
    auto checkpoint = slipway::io::Checkpoint::open_folder(out);
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.error();
    EXPECT_EQ(checkpoint->tensors().at("lm_head.weight").shape, (std::vector<int64_t>{4096, 32}));
    const nlohmann::json run_json = nlohmann::json::parse(slurp(out + "/run.json"));
    EXPECT_EQ(run_json["world_size"], 1);
    EXPECT_EQ(run_json["config"]["training"]["max_steps"], 40);
    // run.json repeats the run exactly: the same losses, step by step.
    nlohmann::json repeat = run_json;
    repeat["config"]["training"]["output_dir"] = (dir_ / "repeat").string();
    std::ofstream((dir_ / "repeat.json").string()) << repeat.dump(2);
    const TrainRun repeated = train((dir_ / "repeat.json").string());
    ASSERT_EQ(repeated.exit_code, 0) << repeated.err;
    const std::vector<slipway::MllogEvent> again_losses =
        events((dir_ / "repeat" / "mllog.txt").string(), "train_loss");
    ASSERT_EQ(again_losses.size(), losses.size());
    for (size_t i = 0; i < losses.size(); ++i)
        EXPECT_EQ(again_losses[i].value, losses[i].value) << "step " << i + 1;
    EXPECT_NE(run.err.find("step 40/40"), std::string::npos) << run.err;
    // The written model scores the same data with a loss near the last eval.
    const TrainRun again = train(write_config(
        "again", {{"model", {{"path", out}, {"init", "pretrained"}}}, {"training", {{"max_steps", 1}}}}));
    ASSERT_EQ(again.exit_code, 0) << again.err;
    const std::vector<slipway::MllogEvent> first =
        events((dir_ / "again" / "mllog.txt").string(), "train_loss");
    ASSERT_EQ(first.size(), 1u);
    EXPECT_LT(first[0].value.get<double>(), losses.front().value.get<double>() - 1.0);
}

// A chat template in the model folder (tokenizer_config.json) and `count` conversations of varied length
// in <dir>/chat.jsonl: a numbered question, a fixed answer.
void write_chat_files(const fs::path& dir, int count) {
    std::ofstream((dir / "model" / "tokenizer_config.json").string()) << nlohmann::json{
        {"eos_token", "<|end_of_text|>"},
        {"chat_template",
         "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}"
         "{% if m['role'] == 'assistant' %}{{ eos_token }}{% endif %}\n{% endfor %}"
         "{% if add_generation_prompt %}assistant:{% endif %}"}}.dump();
    std::ofstream chat((dir / "chat.jsonl").string());
    const char* const things[] = {"cat", "dog", "house", "tree", "river", "town", "king", "ship"};
    for (int i = 0; i < count; ++i) {
        const std::string thing = things[i % 8];
        const std::string where = i % 3 == 0 ? "" : i % 3 == 1 ? " far away" : " in the old town by the sea";
        chat << nlohmann::json{{"messages",
                                {{{"role", "user"},
                                  {"content",
                                   "where is the " + thing + " number " + std::to_string(i) + where + "?"}},
                                 {{"role", "assistant"}, {"content", "the " + thing + " is on the hill."}}}}}
                    .dump()
             << "\n";
    }
}

// A chat file trains on the answers only: the conversations go through the model folder's chat template
// (tokenizer_config.json), packed; the loss over the (learnable) answers falls far, and it differs from
// training on every token of the same data from the same start.
TEST_F(TrainCli, ConversationsTrainOnTheAnswersOnly) {
    write_chat_files(dir_, 96);
    const auto config = [&](const std::string& name, const std::string& train_on) {
        return write_config(name,
                            {{"data",
                              {{"train_file", (dir_ / "chat.jsonl").string()},
                               {"format", "auto"},
                               {"train_on", train_on},
                               {"block_size", 48}}},
                             {"training", {{"max_steps", 30}, {"learning_rate", 1e-2}, {"eval_steps", 30}}}});
    };
    const TrainRun answers = train(config("answers", "assistant"));
    ASSERT_EQ(answers.exit_code, 0) << answers.err;
    EXPECT_NE(answers.err.find("conversations (messages, train_on assistant): "), std::string::npos)
        << answers.err;
    const std::vector<slipway::MllogEvent> losses =
        events((dir_ / "answers" / "mllog.txt").string(), "train_loss");
    ASSERT_EQ(losses.size(), 30u);
    EXPECT_LT(losses.back().value.get<double>(), 2.5) << "the answers are nearly fixed: learnt";
    EXPECT_LT(losses.back().value.get<double>(), losses.front().value.get<double>() - 3.0);
    EXPECT_EQ(events((dir_ / "answers" / "mllog.txt").string(), "eval_loss").size(), 1u);

    const TrainRun all = train(config("all", "all"));
    ASSERT_EQ(all.exit_code, 0) << all.err;
    const std::vector<slipway::MllogEvent> all_losses =
        events((dir_ / "all" / "mllog.txt").string(), "train_loss");
    ASSERT_EQ(all_losses.size(), 30u);
    EXPECT_GT(all_losses.back().value.get<double>(), losses.back().value.get<double>() + 0.3)
        << "the questions (with their numbers) are harder than the answers";
}

// Packing changes nothing but the speed: with every step covering the whole set (batch 1, one micro-batch
// a block), packed and unpacked runs see the same mean over the same trained tokens, so their losses agree
// step by step (the loss is the mean over the step's trained tokens, not a mean of micro-batch means).
TEST_F(TrainCli, PackedConversationsTrainLikeOneABlock) {
    write_chat_files(dir_, 24);
    const auto config = [&](const std::string& name, bool packing, int64_t accumulation) {
        return write_config(name, {{"data",
                                    {{"train_file", (dir_ / "chat.jsonl").string()},
                                     {"packing", packing},
                                     {"validation_split_percentage", 0},
                                     {"block_size", 64}}},
                                   {"training",
                                    {{"max_steps", 4},
                                     {"learning_rate", 1e-2},
                                     {"per_device_train_batch_size", 1},
                                     {"gradient_accumulation_steps", accumulation},
                                     {"eval_steps", nullptr}}}});  // null in a merge patch: removed
    };
    const auto blocks = [&](const std::string& config_path, bool packed) -> int64_t {
        const EngineRun prepared = run_engine("prepare " + config_path);
        EXPECT_EQ(prepared.exit_code, 0) << prepared.err;
        for (const auto& entry : fs::recursive_directory_iterator(dir_ / "cache")) {
            if (entry.path().filename() != "meta.json") continue;
            const nlohmann::json meta = nlohmann::json::parse(slurp(entry.path().string()));
            if (meta["packed"] == packed) return meta["train"]["blocks"].get<int64_t>();
        }
        return 0;
    };
    const int64_t one_each = blocks(config("unpacked", false, 1), false);
    const int64_t packed_blocks = blocks(config("packed", true, 1), true);
    ASSERT_EQ(one_each, 24);
    ASSERT_GT(packed_blocks, 0);
    EXPECT_LE(packed_blocks, 14) << "conversations of about 29 tokens: mostly two a block of 64";
    const TrainRun unpacked = train(config("unpacked", false, one_each));
    ASSERT_EQ(unpacked.exit_code, 0) << unpacked.err;
    const TrainRun packed = train(config("packed", true, packed_blocks));
    ASSERT_EQ(packed.exit_code, 0) << packed.err;
    EXPECT_NE(packed.err.find("packed into " + std::to_string(packed_blocks) + " blocks of 64 tokens"),
              std::string::npos)
        << packed.err;
    const std::vector<slipway::MllogEvent> a = events((dir_ / "unpacked" / "mllog.txt").string(),
                                                      "train_loss"),
                                           b = events((dir_ / "packed" / "mllog.txt").string(), "train_loss");
    ASSERT_EQ(a.size(), 4u);
    ASSERT_EQ(b.size(), 4u);
    for (size_t i = 0; i < a.size(); ++i)
        EXPECT_NEAR(b[i].value.get<double>(), a[i].value.get<double>(), 2e-4) << "step " << i + 1;
    EXPECT_LT(a.back().value.get<double>(), a.front().value.get<double>() - 0.5) << "it learns";
}

// The demo chat set, end to end on This computer: a model trained on resources/demo/conversations.jsonl
// with the demo model folder's chat template answers a training question through `generate --chat` in the
// trained format (its output folder carries the template), and exports to GGUF (llama.cpp runs the file in
// the forky root's gguf check).
TEST_F(TrainCli, ChatModelAnswersInTheTrainedFormatAndExportsToGguf) {
    const std::string demo_model = kSource + "/resources/demo/model";
    for (const char* file : {"tokenizer_config.json", "chat_template.jinja"})
        fs::copy_file(demo_model + "/" + file, dir_ / "model" / file);
    const TrainRun run = train(write_config(
        "chat",
        {{"data",
          {{"train_file", kSource + "/resources/demo/conversations.jsonl"},
           {"validation_split_percentage", 0},
           {"block_size", 128}}},
         {"training",
          {{"max_steps", 150}, {"learning_rate", 1e-2}, {"logging_steps", 50}, {"eval_steps", nullptr}}}}));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const fs::path out = dir_ / "chat";
    for (const char* file : {"tokenizer_config.json", "chat_template.jinja"})
        EXPECT_TRUE(fs::exists(out / file)) << file << " travels with the trained model";
    const std::vector<slipway::MllogEvent> losses = events((out / "mllog.txt").string(), "train_loss");
    ASSERT_FALSE(losses.empty());
    EXPECT_LT(losses.back().value.get<double>(), 1.0) << "the answers are regular: learnt";

    std::ofstream((dir_ / "questions.jsonl").string())
        << nlohmann::json{{"text", "What is the capital of France?"}}.dump() << "\n"
        << nlohmann::json{{"text", "Сколько будет 12 плюс 7?"}}.dump() << "\n";
    const EngineRun chat = run_engine("generate --threads 1 --chat --max-new-tokens 24 --model " +
                                      out.string() + " --prompts " + (dir_ / "questions.jsonl").string());
    ASSERT_EQ(chat.exit_code, 0) << chat.err;
    std::vector<std::string> answers;
    std::istringstream lines(slurp((dir_ / "stdout.txt").string()));
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("{", 0) == 0) answers.push_back(nlohmann::json::parse(line).value("text", ""));
    }
    ASSERT_EQ(answers.size(), 2u) << slurp((dir_ / "stdout.txt").string());
    EXPECT_EQ(answers[0].rfind("The capital of ", 0), 0u)
        << answers[0];  // the format; a 1-layer model mixes facts
    EXPECT_NE(answers[1].find("плюс"), std::string::npos) << answers[1];

    for (const char* type : {"f32", "q8_0"}) {
        const std::string gguf = (dir_ / (std::string("chat-") + type + ".gguf")).string();
        const EngineRun exported =
            run_engine("export gguf --model " + out.string() + " --out " + gguf + " --type " + type);
        ASSERT_EQ(exported.exit_code, 0) << exported.err;
        const std::string bytes = slurp(gguf);
        ASSERT_GT(bytes.size(), 24u);
        EXPECT_EQ(bytes.substr(0, 4), "GGUF");
        EXPECT_EQ(static_cast<int>(bytes[4]), 3) << "GGUF version 3";
        EXPECT_NE(bytes.find("tokenizer.chat_template"), std::string::npos);
        EXPECT_NE(bytes.find("<|assistant|>"), std::string::npos) << "the template's text is in the metadata";
        // The demo tokenizer's template puts <|begin_of_text|> before every text: llama.cpp must add it too,
        // and the export says so and why.
        const std::string report = slurp((dir_ / "stdout.txt").string());
        EXPECT_NE(report.find("tokenizer.ggml.add_bos_token true (<|begin_of_text|>, id "), std::string::npos)
            << report;
        EXPECT_NE(report.find("tokenizer.ggml.add_eos_token false: "), std::string::npos) << report;
    }
    // A tokenizer llama.cpp would not read the same way is refused by name, and nothing is written.
    nlohmann::json tokenizer = nlohmann::json::parse(slurp((out / "tokenizer.json").string()));
    tokenizer["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\s+";
    std::ofstream((out / "tokenizer.json").string()) << tokenizer.dump();
    const std::string refused = (dir_ / "refused.gguf").string();
    const EngineRun bad = run_engine("export gguf --model " + out.string() + " --out " + refused);
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.err.find("tokenizer.json"), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(refused));
}

// A Mistral whose window is shorter than its context exports (as convert_hf_to_gguf.py does) with a warning:
// llama.cpp's llama architecture attends past the window; one without a window exports without it.
TEST_F(TrainCli, ExportWarnsOfAMistralWindowThatLlamaCppDoesNotHave) {
    for (const char* window : {"16", "null"}) {
        const fs::path model = dir_ / (std::string("mistral-") + window);
        std::ofstream((dir_ / "mistral.json").string())
            << R"({"model_type": "mistral", "vocab_size": 4096, "hidden_size": 32, "intermediate_size": 64,
                   "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
                   "max_position_embeddings": 64, "sliding_window": )"
            << window << "}";
        ASSERT_EQ(
            run_engine("init-model --config " + (dir_ / "mistral.json").string() + " --out " + model.string())
                .exit_code,
            0);
        fs::copy_file(std::string(test_paths::source_dir("/resources/demo/tokenizer.json")),
                      model / "tokenizer.json");
        const EngineRun exported = run_engine("export gguf --model " + model.string() + " --out " +
                                              (model / "m.gguf").string() + " --type f32");
        ASSERT_EQ(exported.exit_code, 0) << exported.err;
        const std::string report = slurp((dir_ / "stdout.txt").string());
        const bool warned =
            report.find(
                "warning: config.json sliding_window 16 < max_position_embeddings 64: the GGUF's llama "
                "architecture has no window") != std::string::npos;
        EXPECT_EQ(warned, std::string(window) == "16") << report;
    }
}

TEST_F(TrainCli, MllogFollowsTheMlperfRules) {
    ASSERT_EQ(train(write_config("rules", {{"eval", {{"target", 9.0}}}})).exit_code, 0);
    const std::string mllog = (dir_ / "rules" / "mllog.txt").string();
    const std::vector<slipway::MllogEvent> all = events(mllog);
    auto index_of = [&](const std::string& key) {
        for (size_t i = 0; i < all.size(); ++i) {
            if (all[i].key == key) return static_cast<int64_t>(i);
        }
        return int64_t{-1};
    };
    auto count = [&](const std::string& key) { return events(mllog, key).size(); };
    ASSERT_GE(index_of("init_start"), 0);
    EXPECT_LT(index_of("init_start"), index_of("run_start"));
    EXPECT_EQ(count("run_start"), 1u);
    EXPECT_EQ(count("run_stop"), 1u);
    EXPECT_EQ(all.back().key, "run_stop");
    EXPECT_EQ(all.back().metadata["status"],
              "success");  // target 9 > initial loss: reached at the first eval
    for (const char* key : {"global_batch_size", "opt_base_learning_rate", "gradient_accumulation_steps",
                            "opt_gradient_clip_norm", "opt_adamw_weight_decay",
                            "opt_learning_rate_training_steps", "seed", "train_samples", "eval_samples"}) {
        EXPECT_EQ(count(key), 1u) << key;
    }
    const std::vector<slipway::MllogEvent> evals = events(mllog, "eval_accuracy");
    ASSERT_EQ(evals.size(), 2u);
    EXPECT_EQ(evals[0].samples_count(), 24);  // step 6 x global batch 4
    EXPECT_EQ(evals[1].samples_count(), 48);
    // The app's own reader sees the same run.
    auto summary = slipway::summarize_log_file(mllog);
    ASSERT_TRUE(summary.ok());
    EXPECT_EQ(summary->status, "success");
    EXPECT_EQ(summary->train_loss.size(), 12u);
}

// /eval/tasks: every evaluation logs one eval_task line per task and metric, and the last ones equal what
// `slipway-engine eval` measures on the written model; a bad task file stops the run before training.
TEST_F(TrainCli, EvalTasksAreLoggedAtEveryEvaluation) {
    std::ofstream(dir_ / "mc.jsonl")
        << R"({"context": "Win98", "choices": ["ошибка", "error"], "gold": 0})"
        << "\n"
        << R"({"context": "The", "choices": ["program", "компьютер"], "gold": 0})"
        << "\n";
    std::ofstream(dir_ / "copy.jsonl") << R"({"prompt": "Copy: abc\nCopy:", "target": "abc"})"
                                       << "\n";
    std::ofstream(dir_ / "ppl.jsonl") << R"({"text": "Win98 ошибка 001: загрузка выполнена."})"
                                      << "\n";
    const std::string tasks = (dir_ / "eval-tasks.json").string();
    std::ofstream(tasks) << R"({"tasks": [{"name": "mc", "kind": "multiple_choice", "data": "mc.jsonl"},
        {"name": "copy", "kind": "generation", "data": "copy.jsonl", "max_new_tokens": 4},
        {"name": "ppl", "kind": "perplexity", "data": "ppl.jsonl"}]})";
    const TrainRun run = train(write_config("tasks", {{"eval", {{"tasks", tasks}}}}));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::string out = (dir_ / "tasks").string();
    const std::vector<slipway::MllogEvent> lines = events(out + "/mllog.txt", "eval_task");
    ASSERT_EQ(lines.size(),
              12u);  // 2 evaluations x (acc, acc_norm, exact_match, prefix_match, perplexity, nll)
    std::map<std::string, double> last;
    for (size_t i = 0; i < lines.size(); ++i) {
        EXPECT_EQ(lines[i].metadata["step_num"], i < 6 ? 6 : 12);
        EXPECT_EQ(lines[i].samples_count(), i < 6 ? 24 : 48);
        last[lines[i].metadata["task"].get<std::string>() + "/" +
             lines[i].metadata["metric"].get<std::string>()] = lines[i].value.get<double>();
    }
    EXPECT_EQ(last.size(), 6u);
    EXPECT_NE(run.err.find("eval tasks: mc acc"), std::string::npos) << run.err;

    ASSERT_EQ(run_engine("eval --threads 1 --model " + out + " --tasks " + tasks).exit_code, 0);
    const nlohmann::json measured = nlohmann::json::parse(slurp((dir_ / "stdout.txt").string()));
    for (const nlohmann::json& task : measured["tasks"]) {
        for (const auto& [metric, value] : task["metrics"].items()) {
            const std::string key = task["name"].get<std::string>() + "/" + metric;
            ASSERT_TRUE(last.count(key)) << key;
            // The same weights and ids; the training-time model and the loaded one may round float32 sums
            // differently (measured 7e-9 relative), while one token scored differently moves a metric by 1e-3
            // or more.
            EXPECT_NEAR(last[key], value.get<double>(), 1e-6 * std::max(1.0, std::fabs(value.get<double>())))
                << key;
        }
    }

    std::ofstream(dir_ / "bad-tasks.json")
        << R"({"tasks": [{"name": "x", "kind": "essay", "data": "mc.jsonl"}]})";
    const TrainRun bad =
        train(write_config("bad", {{"eval", {{"tasks", (dir_ / "bad-tasks.json").string()}}}}));
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find("/eval/tasks: " + (dir_ / "bad-tasks.json").string() +
                           R"(: tasks[0] "x": field "kind")"),
              std::string::npos)
        << bad.err;
    EXPECT_FALSE(fs::exists(dir_ / "bad" / "model.safetensors"));
}

TEST_F(TrainCli, EmbeddingsModeChangesOnlyEmbeddings) {
    ASSERT_EQ(train(write_config("base", {{"training", {{"max_steps", 1}}}})).exit_code, 0);
    const std::string base = (dir_ / "base").string();
    const TrainRun run = train(write_config("emb", {{"model", {{"path", base}, {"init", "pretrained"}}},
                                                    {"adapter", {{"method", "embeddings"}}},
                                                    {"training", {{"max_steps", 3}}}}));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto before = slipway::io::Checkpoint::open_folder(base);
    auto after = slipway::io::Checkpoint::open_folder((dir_ / "emb").string());
    ASSERT_TRUE(before.ok() && after.ok());
    ASSERT_EQ(before->tensors().size(), after->tensors().size());
    for (const auto& [name, b] : before->tensors()) {
        const slipway::io::TensorView& a = after->tensors().at(name);
        const bool same = a.nbytes == b.nbytes && std::memcmp(a.data, b.data, a.nbytes) == 0;
        const bool trainable = name == "model.embed_tokens.weight" || name == "lm_head.weight";
        EXPECT_EQ(same, !trainable) << name;
    }
}

TEST_F(TrainCli, AccumulationEqualsALargerBatch) {
    const nlohmann::json one_step = {{"training", {{"max_steps", 2}, {"eval_steps", nullptr}}},
                                     {"data", {{"validation_split_percentage", 0}}}};
    nlohmann::json accumulated = one_step, large = one_step;
    accumulated["training"]["per_device_train_batch_size"] = 2;
    accumulated["training"]["gradient_accumulation_steps"] = 2;
    large["training"]["per_device_train_batch_size"] = 4;
    large["training"]["gradient_accumulation_steps"] = 1;
    ASSERT_EQ(train(write_config("accumulated", accumulated)).exit_code, 0);
    ASSERT_EQ(train(write_config("large", large)).exit_code, 0);
    for (const char* key : {"train_loss", "grad_norm"}) {
        const auto a = events((dir_ / "accumulated" / "mllog.txt").string(), key);
        const auto b = events((dir_ / "large" / "mllog.txt").string(), key);
        ASSERT_EQ(a.size(), 2u);
        ASSERT_EQ(b.size(), 2u);
        for (size_t i = 0; i < 2; ++i) {
            EXPECT_NEAR(a[i].value.get<double>(), b[i].value.get<double>(),
                        1e-5 * std::fabs(b[i].value.get<double>()))
                << key << " " << i;
        }
    }
}

TEST_F(TrainCli, BadConfigAndFlagsAreRefused) {
    const std::string config = write_config("bad", {{"training", {{"learning_rate", -1}}}});
    const TrainRun run = train(config);
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find("/training/learning_rate: must be > 0, got -1"), std::string::npos) << run.err;
    const TrainRun flag = train(write_config("flag", {}) + " --learning_rat 1e-3 --lora_rnk 4");
    EXPECT_EQ(flag.exit_code, 1);
    EXPECT_NE(flag.err.find("--lora_rnk: unknown flag (did you mean --lora_rank?)"), std::string::npos)
        << flag.err;
    const TrainRun lora = train(
        write_config("lora", {{"adapter", {{"method", "lora"}, {"target_modules", {"q_proj", "v_prj"}}}}}));
    EXPECT_EQ(lora.exit_code, 1);
    EXPECT_NE(lora.err.find("/adapter/target_modules: \"v_prj\" matches no linear layer of the model"),
              std::string::npos)
        << lora.err;
}

TEST_F(TrainCli, ResumeContinuesTheSameLossCurve) {
    const nlohmann::json patch = {{"training",
                                   {{"max_steps", 12},
                                    {"save_steps", 3},
                                    {"save_total_limit", 2},
                                    {"eval_steps", nullptr},
                                    {"lr_scheduler_type", "cosine"},
                                    {"warmup_steps", 2}}},
                                  {"data", {{"validation_split_percentage", 0}}}};
    ASSERT_EQ(train(write_config("straight", patch)).exit_code, 0);
    const std::string resumed = write_config("resumed", patch);
    const TrainRun first = train(resumed + " --stop-after-steps 6");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    // Killed at step 6 with save_steps 3 and save_total_limit 2: checkpoints 3 and 6 remain.
    EXPECT_TRUE(fs::exists(dir_ / "resumed" / "checkpoint-6" / "DONE"));
    EXPECT_TRUE(fs::exists(dir_ / "resumed" / "checkpoint-3" / "DONE"));
    const TrainRun second = train(resumed + " --resume_from_checkpoint latest");
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(second.err.find("resumed from"), std::string::npos) << second.err;
    EXPECT_FALSE(fs::exists(dir_ / "resumed" / "checkpoint-3")) << "save_total_limit 2 prunes the oldest";
    EXPECT_TRUE(fs::exists(dir_ / "resumed" / "checkpoint-12" / "DONE"));
    auto by_step = [](const std::vector<slipway::MllogEvent>& events) {
        std::map<int64_t, double> out;
        for (const auto& e : events)
            out[e.metadata["step_num"].get<int64_t>()] = e.value.get<double>();
        return out;
    };
    const auto a = by_step(events((dir_ / "straight" / "mllog.txt").string(), "train_loss"));
    const auto b = by_step(events((dir_ / "resumed" / "mllog.txt").string(), "train_loss"));
    ASSERT_EQ(a.size(), 12u);
    ASSERT_EQ(b.size(), 12u);
    for (int64_t step = 1; step <= 12; ++step)
        EXPECT_DOUBLE_EQ(a.at(step), b.at(step)) << "step " << step;
    // The final weights are identical too.
    auto wa = slipway::io::Checkpoint::open_folder((dir_ / "straight").string());
    auto wb = slipway::io::Checkpoint::open_folder((dir_ / "resumed").string());
    ASSERT_TRUE(wa.ok() && wb.ok());
    for (const auto& [name, view] : wa->tensors()) {
        EXPECT_EQ(std::memcmp(view.data, wb->tensors().at(name).data, view.nbytes), 0) << name;
    }
}

// A job requeued after its time limit or a preemption (the sbatch script passes --resume-latest-if-any on a
// restart): it continues from its newest checkpoint, its curve equal to an uninterrupted run's, one mllog.txt
// with the resume marked; with no checkpoint yet it trains from the start.
TEST_F(TrainCli, ARestartedJobResumesFromItsNewestCheckpointOrStartsFresh) {
    const nlohmann::json patch = {
        {"training", {{"max_steps", 8}, {"save_steps", 2}, {"eval_steps", nullptr}}},
        {"data", {{"validation_split_percentage", 0}}}};
    ASSERT_EQ(train(write_config("straight", patch)).exit_code, 0);
    const std::string requeued = write_config("requeued", patch);
    const TrainRun first = train(requeued + " --stop-after-steps 5");  // stopped after step 5: newest is 4
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const TrainRun second = train(requeued + " --resume-latest-if-any", "SLURM_RESTART_COUNT=1");
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(second.err.find("at step 4"), std::string::npos) << second.err;

    const std::vector<slipway::MllogEvent> resumes =
        events((dir_ / "requeued" / "mllog.txt").string(), "resume");
    ASSERT_EQ(resumes.size(), 1u);
    EXPECT_EQ(resumes[0].value.get<int64_t>(), 4);
    EXPECT_EQ(resumes[0].metadata["restart"].get<int64_t>(), 1);
    EXPECT_NE(resumes[0].metadata["checkpoint"].get<std::string>().find("checkpoint-4"), std::string::npos);
    // Steps 1-5 of the first segment, then 5-8 again from checkpoint 4: the last value of each step is the
    // curve a user sees, and it is the uninterrupted run's, bit for bit.
    std::map<int64_t, double> straight, continued;
    for (const auto& e : events((dir_ / "straight" / "mllog.txt").string(), "train_loss"))
        straight[e.metadata["step_num"].get<int64_t>()] = e.value.get<double>();
    for (const auto& e : events((dir_ / "requeued" / "mllog.txt").string(), "train_loss"))
        continued[e.metadata["step_num"].get<int64_t>()] = e.value.get<double>();
    ASSERT_EQ(straight.size(), 8u);
    ASSERT_EQ(continued.size(), 8u);
    for (int64_t step = 1; step <= 8; ++step)
        EXPECT_EQ(straight.at(step), continued.at(step)) << "step " << step;

    // No checkpoint yet (stopped before the first save): the restart trains from the start, in a folder its
    // first segment already wrote to.
    const std::string early = write_config("early", patch);
    ASSERT_EQ(train(early + " --stop-after-steps 1").exit_code, 0);
    const TrainRun fresh = train(early + " --resume-latest-if-any", "SLURM_RESTART_COUNT=1");
    ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
    EXPECT_NE(fresh.err.find("restart 1: no checkpoint in"), std::string::npos) << fresh.err;
    EXPECT_NE(fresh.err.find("yet: training from the start"), std::string::npos) << fresh.err;
    EXPECT_TRUE(events((dir_ / "early" / "mllog.txt").string(), "resume").empty());
}

TEST_F(TrainCli, IncompleteOrCorruptCheckpointsAreRefused) {
    const nlohmann::json patch = {
        {"training", {{"max_steps", 4}, {"save_steps", 2}, {"eval_steps", nullptr}}},
        {"data", {{"validation_split_percentage", 0}}}};
    const std::string config = write_config("ckpt", patch);
    ASSERT_EQ(train(config + " --stop-after-steps 2").exit_code, 0);
    const fs::path checkpoint = dir_ / "ckpt" / "checkpoint-2";
    fs::remove(checkpoint / "DONE");
    TrainRun run = train(config + " --resume_from_checkpoint " + checkpoint.string());
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find(checkpoint.string() + " has no DONE marker"), std::string::npos) << run.err;
    run = train(config + " --resume_from_checkpoint latest");
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find("no complete checkpoint under"), std::string::npos) << run.err;
    std::ofstream(checkpoint / "DONE") << "step 2\n";
    // A hand-edited state.json: a negative count is refused by name, not read as 2^64 - 1.
    nlohmann::json state = nlohmann::json::parse(std::ifstream(checkpoint / "state.json"));
    const nlohmann::json saved = state;
    state["epoch"] = -1;
    std::ofstream(checkpoint / "state.json") << state.dump();
    run = train(config + " --resume_from_checkpoint latest");
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find("state.json: epoch must be an integer of at least 0, got -1"), std::string::npos)
        << run.err;
    std::ofstream(checkpoint / "state.json") << saved.dump();
    fs::resize_file(checkpoint / "state.safetensors", 100);
    run = train(config + " --resume_from_checkpoint latest");
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find((checkpoint / "state.safetensors").string()), std::string::npos) << run.err;
}

TEST_F(TrainCli, Bf16AutocastKeepsFp32MasterWeights) {
    const nlohmann::json patch = {{"training", {{"max_steps", 8}, {"eval_steps", nullptr}}},
                                  {"data", {{"validation_split_percentage", 0}}}};
    ASSERT_EQ(train(write_config("fp32", patch)).exit_code, 0);
    const TrainRun run = train(write_config("bf16", patch) + " --bf16");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto a = events((dir_ / "fp32" / "mllog.txt").string(), "train_loss");
    const auto b = events((dir_ / "bf16" / "mllog.txt").string(), "train_loss");
    ASSERT_EQ(a.size(), 8u);
    ASSERT_EQ(b.size(), 8u);
    // bf16 must actually change the arithmetic. Not asked of the first step alone: on this tiny model
    // (losses near ln 4096) its effect on one step's mean loss is about one float ulp, and LibTorch 2.14's
    // CPU kernels happen to land on the fp32 value exactly; the steps after it follow bf16 gradients.
    bool changed = false;
    for (size_t i = 0; i < a.size(); ++i) {
        const double x = a[i].value.get<double>(), y = b[i].value.get<double>();
        EXPECT_NEAR(x, y, 0.02 * x) << "step " << i + 1;  // bf16 matmuls: close, not equal
        changed = changed || x != y;
    }
    EXPECT_TRUE(changed) << "bf16 must actually change the arithmetic";
    auto weights = slipway::io::Checkpoint::open_folder((dir_ / "bf16").string());
    ASSERT_TRUE(weights.ok());
    EXPECT_EQ(weights->tensors().at("lm_head.weight").dtype, slipway::io::DType::kF32);
}

TEST_F(TrainCli, NonFiniteLossStopsBeforeTheOptimizerStep) {
    // A pretrained model with a NaN in lm_head: the first loss is NaN.
    ASSERT_EQ(train(write_config("finite", {{"training", {{"max_steps", 1}}}})).exit_code, 0);
    auto checkpoint = slipway::io::Checkpoint::open_folder((dir_ / "finite").string());
    ASSERT_TRUE(checkpoint.ok());
    std::vector<std::vector<uint8_t>> buffers;
    std::map<std::string, slipway::io::TensorView> views;
    for (const auto& [name, view] : checkpoint->tensors()) {
        buffers.emplace_back(view.data, view.data + view.nbytes);
        if (name == "lm_head.weight") {
            const float nan = std::nanf("");
            std::memcpy(buffers.back().data(), &nan, sizeof(float));
        }
        slipway::io::TensorView copy = view;
        copy.data = buffers.back().data();
        views[name] = copy;
    }
    fs::create_directories(dir_ / "nan_model");
    fs::copy_file(dir_ / "finite" / "config.json", dir_ / "nan_model" / "config.json");
    ASSERT_TRUE(
        slipway::io::write_safetensors((dir_ / "nan_model" / "model.safetensors").string(), views).ok());
    const TrainRun run = train(
        write_config("nan", {{"model", {{"path", (dir_ / "nan_model").string()}, {"init", "pretrained"}}}}));
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find("step 1: non-finite loss"), std::string::npos) << run.err;
    const auto stops = events((dir_ / "nan" / "mllog.txt").string(), "run_stop");
    ASSERT_EQ(stops.size(), 1u);
    EXPECT_EQ(stops[0].metadata["status"], "aborted");
}

// An error of the run's own in a step (not a collective's: there is no peer) ends it with exit 1, the cause
// on stderr and in run_stop's metadata (status fail), and never as a lost peer or an uncaught exception.
TEST_F(TrainCli, AnErrorInAStepEndsTheRunWithRunStopFailNamingTheCause) {
    const std::map<std::string, std::string> causes = {
        {"shape", "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"},
        {"oom", "out of memory (std::bad_alloc)"},
        {"file", "filesystem error: cannot get file size: No such file or directory"}};
    for (const auto& [kind, cause] : causes) {
        const TrainRun run = train(write_config(kind, {}), "SLIPWAY_FAULT_THROW_AT=0:3:" + kind);
        EXPECT_EQ(run.exit_code, 1) << kind << ": " << run.err;
        EXPECT_NE(run.err.find("train: failed during step 3: " + cause), std::string::npos) << run.err;
        EXPECT_EQ(run.err.find("lost"), std::string::npos) << run.err;
        EXPECT_EQ(run.err.find("frame #"), std::string::npos) << "c10's backtrace is left out:\n" << run.err;
        const std::string mllog = (dir_ / kind / "mllog.txt").string();
        EXPECT_EQ(events(mllog, "train_loss").size(), 2u) << kind;
        slipway::testing_support::expect_failed_run_stop(mllog, 3, cause);
    }
}

// What escapes a command anyway (here: before training starts) is an internal error and exit 1, not abort.
TEST_F(TrainCli, AnExceptionOutsideTheTrainerIsAnInternalErrorNotAnAbort) {
    const TrainRun run = train(write_config("escape", {}), "SLIPWAY_FAULT_THROW_AT=0:0:oom");
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("slipway-engine train: internal error: out of memory (std::bad_alloc)"),
              std::string::npos)
        << run.err;
}

TEST_F(TrainCli, FullDiskKeepsThePreviousCheckpoint) {
    // output_dir on a 5 MB tmpfs in a private mount namespace: checkpoint-2 (~3.2 MB: weights and two
    // AdamW moments) fits, checkpoint-4 does not.
    if (geteuid() != 0 || std::system("unshare -m true 2>/dev/null") != 0)
        GTEST_SKIP() << "needs root and unshare -m";
    const fs::path mount = dir_ / "small_disk";
    const fs::path kept = dir_ / "kept";
    fs::create_directories(mount);
    const std::string config = write_config("full_disk", {{"training",
                                                           {{"max_steps", 6},
                                                            {"save_steps", 2},
                                                            {"eval_steps", nullptr},
                                                            {"output_dir", (mount / "out").string()}}},
                                                          {"data", {{"validation_split_percentage", 0}}}});
    const std::string script = "set -e; mount -t tmpfs -o size=5M tmpfs " + mount.string() + "; " +
                               std::string(test_paths::engine_bin()) + " train --threads 1 " + config +
                               " > /dev/null 2> " + (dir_ / "full_disk.err").string() + "; echo $? > " +
                               (dir_ / "full_disk.rc").string() + "; cp -r " + (mount / "out").string() +
                               " " + kept.string();
    ASSERT_EQ(std::system(("unshare -m bash -c '" + script + "'").c_str()), 0)
        << slurp((dir_ / "full_disk.err").string());
    const std::string err = slurp((dir_ / "full_disk.err").string());
    EXPECT_NE(err.find("checkpoint at step 4 not written"), std::string::npos) << err;
    EXPECT_NE(err.find("the previous checkpoint " + (mount / "out" / "checkpoint-2").string() + " is intact"),
              std::string::npos)
        << err;
    EXPECT_TRUE(fs::exists(kept / "checkpoint-2" / "DONE"));
    EXPECT_FALSE(fs::exists(kept / "checkpoint-4"));
    EXPECT_FALSE(fs::exists(kept / "checkpoint-4.tmp")) << "no half-written checkpoint is left";
    // The kept checkpoint still resumes.
    const std::string resumed = write_config(
        "after_full_disk", {{"training", {{"max_steps", 6}, {"save_steps", 2}, {"eval_steps", nullptr}}},
                            {"data", {{"validation_split_percentage", 0}}}});
    const TrainRun run = train(resumed + " --resume_from_checkpoint " + (kept / "checkpoint-2").string());
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("resumed from"), std::string::npos) << run.err;
}

// Also under bf16 autocast: the recomputation in backward runs in bf16 as its forward did.
TEST_F(TrainCli, GradientCheckpointingGivesTheSameSteps) {
    for (const bool bf16 : {false, true}) {
        for (const char* method : {"full", "lora"}) {
            const nlohmann::json patch = {
                {"training", {{"max_steps", 4}, {"eval_steps", nullptr}, {"bf16", bf16}}},
                {"data", {{"validation_split_percentage", 0}}},
                {"adapter",
                 std::string(method) == "lora"
                     ? nlohmann::json{{"method", method}, {"target_modules", {"q_proj", "down_proj"}}}
                     : nlohmann::json{{"method", method}}}};
            nlohmann::json recompute = patch;
            recompute["training"]["gradient_checkpointing"] = true;
            const std::string suffix = std::string(method) + (bf16 ? "_bf16" : "");
            const std::string plain_name = "plain_" + suffix, ckpt_name = "recompute_" + suffix;
            ASSERT_EQ(train(write_config(plain_name, patch)).exit_code, 0);
            const TrainRun run = train(write_config(ckpt_name, recompute));
            ASSERT_EQ(run.exit_code, 0) << run.err;
            for (const char* key : {"train_loss", "grad_norm"}) {
                const auto a = events((dir_ / plain_name / "mllog.txt").string(), key);
                const auto b = events((dir_ / ckpt_name / "mllog.txt").string(), key);
                ASSERT_EQ(a.size(), 4u);
                ASSERT_EQ(b.size(), 4u);
                for (size_t i = 0; i < a.size(); ++i) {
                    EXPECT_NEAR(a[i].value.get<double>(), b[i].value.get<double>(),
                                1e-6 * std::fabs(a[i].value.get<double>()))
                        << suffix << " " << key << " step " << i + 1;
                }
            }
        }
    }
}

TEST_F(TrainCli, LoraAllLinearAdaptsEveryProjectionButTheHead) {
    const TrainRun run = train(write_config(
        "all_linear", {{"adapter", {{"method", "lora"}, {"target_modules", {"all-linear"}}, {"r", 2}}},
                       {"training", {{"max_steps", 2}, {"eval_steps", nullptr}}},
                       {"data", {{"validation_split_percentage", 0}}}}));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto adapter =
        slipway::io::Checkpoint::open_file((dir_ / "all_linear" / "adapter_model.safetensors").string());
    ASSERT_TRUE(adapter.ok()) << adapter.error();
    std::set<std::string> modules;
    for (const auto& [key, view] : adapter->tensors())
        modules.insert(key.substr(0, key.find(".lora_")));
    const std::string layer = "base_model.model.model.layers.0.";
    const std::set<std::string> expected = {layer + "self_attn.q_proj", layer + "self_attn.k_proj",
                                            layer + "self_attn.v_proj", layer + "self_attn.o_proj",
                                            layer + "mlp.gate_proj",    layer + "mlp.up_proj",
                                            layer + "mlp.down_proj"};
    EXPECT_EQ(modules, expected);
    const nlohmann::json config =
        nlohmann::json::parse(slurp((dir_ / "all_linear" / "adapter_config.json").string()));
    EXPECT_EQ(config["target_modules"], "all-linear");
}

TEST_F(TrainCli, FlagsOverrideTheConfig) {
    const TrainRun run = train(write_config("override", {}) + " --max_steps 3 --learning_rate 1e-3");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(events((dir_ / "override" / "mllog.txt").string(), "train_loss").size(), 3u);
    const auto lr = events((dir_ / "override" / "mllog.txt").string(), "opt_base_learning_rate");
    ASSERT_EQ(lr.size(), 1u);
    EXPECT_DOUBLE_EQ(lr[0].value.get<double>(), 1e-3);
}

}  // namespace
