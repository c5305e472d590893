// LoRA through the engine's commands: training writes a PEFT adapter (keys, shapes, config); the base
// stays untouched; score with the adapter equals score of the merged model and the independent PyTorch
// reference; an adapter whose B is zero scores exactly like the base.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
const std::string kSource = test_paths::source_dir();
const std::string kEngine = test_paths::engine_bin();

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

int sh(const std::string& command) {
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<nlohmann::json> jsonl(const std::string& path) {
    std::vector<nlohmann::json> out;
    std::istringstream in(slurp(path));
    std::string line;
    while (std::getline(in, line))
        out.push_back(nlohmann::json::parse(line));
    return out;
}

class LoraCli : public testing::Test {
protected:
    static void SetUpTestSuite() {
        // One folder per process: ctest runs each test as its own process, several at once.
        dir_ = fs::path(testing::TempDir()) / ("lora_cli_" + std::to_string(getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        std::ofstream(dir_ / "config.json")
            << R"({"vocab_size": 4096, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 128,
            "initializer_range": 0.1})";
        ASSERT_EQ(sh(kEngine + " init-model --config " + (dir_ / "config.json").string() + " --out " +
                     (dir_ / "base").string() + " --seed 3 > /dev/null"),
                  0);
        std::ifstream corpus(kSource + "/resources/demo/corpus.jsonl");
        std::ofstream data(dir_ / "data.jsonl");
        std::string line;
        for (int i = 0; i < 400 && std::getline(corpus, line); ++i)
            data << line << "\n";
        data.close();
        const nlohmann::json config = {
            {"name", "lora"},
            {"model", {{"path", (dir_ / "base").string()}, {"dtype", "float32"}}},
            {"tokenizer", {{"path", kSource + "/resources/demo/tokenizer.json"}}},
            {"data",
             {{"train_file", (dir_ / "data.jsonl").string()},
              {"block_size", 32},
              {"validation_split_percentage", 0},
              {"cache_dir", (dir_ / "cache").string()}}},
            {"training",
             {{"learning_rate", 1e-2},
              {"max_steps", 6},
              {"per_device_train_batch_size", 4},
              {"logging_steps", 1},
              {"output_dir", (dir_ / "adapter").string()}}},
            {"adapter",
             {{"method", "lora"},
              {"r", 4},
              {"lora_alpha", 8},
              {"target_modules", {"q_proj", "v_proj", "down_proj"}},
              {"rank_pattern", {{"layers.1.mlp.down_proj", 2}}},
              {"modules_to_save", {"lm_head"}}}},
            {"slurm", {{"gpus_per_node", 0}}},
        };
        std::ofstream(dir_ / "run.json") << config.dump(2);
        ASSERT_EQ(sh(kEngine + " train --threads 1 " + (dir_ / "run.json").string() + " > /dev/null 2> " +
                     (dir_ / "train.err").string()),
                  0)
            << slurp((dir_ / "train.err").string());
        // Token lines to score.
        std::ofstream tokens(dir_ / "tokens.jsonl");
        for (int n : {20, 64, 7}) {
            nlohmann::json ids = nlohmann::json::array();
            for (int i = 0; i < n; ++i)
                ids.push_back((i * 7919 + n * 131) % 4096);
            tokens << nlohmann::json{{"ids", ids}}.dump() << "\n";
        }
    }

    std::vector<nlohmann::json> score(const std::string& model, const std::string& adapter,
                                      const std::string& out_name) {
        const std::string out = (dir_ / out_name).string();
        const std::string command = kEngine + " score --threads 1 --model " + model +
                                    (adapter.empty() ? "" : " --adapter " + adapter) + " --tokens " +
                                    (dir_ / "tokens.jsonl").string() + " > " + out;
        EXPECT_EQ(sh(command), 0) << command;
        return jsonl(out);
    }

    static fs::path dir_;
};
fs::path LoraCli::dir_;

TEST_F(LoraCli, WritesAPeftAdapter) {
    const nlohmann::json config =
        nlohmann::json::parse(slurp((dir_ / "adapter" / "adapter_config.json").string()));
    EXPECT_EQ(config["peft_type"], "LORA");
    EXPECT_EQ(config["task_type"], "CAUSAL_LM");
    EXPECT_EQ(config["r"], 4);
    EXPECT_EQ(config["lora_alpha"], 8.0);
    EXPECT_EQ(config["target_modules"], nlohmann::json({"q_proj", "v_proj", "down_proj"}));
    EXPECT_EQ(config["modules_to_save"], nlohmann::json({"lm_head"}));
    EXPECT_EQ(config["base_model_name_or_path"], (dir_ / "base").string());
    EXPECT_FALSE(fs::exists(dir_ / "adapter" / "model.safetensors"));
    auto adapter =
        slipway::io::Checkpoint::open_file((dir_ / "adapter" / "adapter_model.safetensors").string());
    ASSERT_TRUE(adapter.ok()) << adapter.error();
    const auto& t = adapter->tensors();
    EXPECT_EQ(t.size(), 2u * 3u * 2u + 1u);  // 2 layers x 3 targets x (A, B) + lm_head
    EXPECT_EQ(t.at("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight").shape,
              (std::vector<int64_t>{4, 32}));
    EXPECT_EQ(t.at("base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight").shape,
              (std::vector<int64_t>{32, 4}));
    EXPECT_EQ(t.at("base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight").shape,
              (std::vector<int64_t>{16, 4}));
    EXPECT_EQ(t.at("base_model.model.model.layers.1.mlp.down_proj.lora_A.weight").shape,
              (std::vector<int64_t>{2, 64}));  // rank_pattern
    EXPECT_EQ(t.at("base_model.model.lm_head.weight").shape, (std::vector<int64_t>{4096, 32}));
    EXPECT_TRUE(fs::exists(dir_ / "adapter" / "tokenizer.json"));
}

TEST_F(LoraCli, AdapterEqualsMergedModelAndTheReference) {
    const std::string base = (dir_ / "base").string(), adapter = (dir_ / "adapter").string();
    ASSERT_EQ(sh(kEngine + " merge --model " + base + " --adapter " + adapter + " --out " +
                 (dir_ / "merged").string() + " > /dev/null"),
              0);
    const std::vector<nlohmann::json> with_adapter = score(base, adapter, "scores_adapter.jsonl");
    const std::vector<nlohmann::json> merged = score((dir_ / "merged").string(), "", "scores_merged.jsonl");
    const std::vector<nlohmann::json> plain = score(base, "", "scores_base.jsonl");
    ASSERT_EQ(with_adapter.size(), 4u);
    ASSERT_EQ(merged.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
        const double a = with_adapter[i]["loss"].get<double>(), m = merged[i]["loss"].get<double>();
        EXPECT_NEAR(a, m, 1e-5 * std::fabs(m)) << i;
        EXPECT_GT(std::fabs(a - plain[i]["loss"].get<double>()), 1e-3) << "the adapter must change the model";
    }
    const std::string reference = "/usr/bin/python3 " + kSource +
                                  "/tests/reference/llama_reference.py score --model " + base +
                                  " --adapter " + adapter + " --tokens " + (dir_ / "tokens.jsonl").string() +
                                  " --engine-scores " + (dir_ / "scores_adapter.jsonl").string();
    EXPECT_EQ(sh(reference), 0) << reference;
}

TEST_F(LoraCli, ZeroBScoresExactlyLikeTheBase) {
    const fs::path zero = dir_ / "zero_b";
    fs::create_directories(zero);
    fs::copy_file(dir_ / "adapter" / "adapter_config.json", zero / "adapter_config.json",
                  fs::copy_options::overwrite_existing);
    auto adapter =
        slipway::io::Checkpoint::open_file((dir_ / "adapter" / "adapter_model.safetensors").string());
    ASSERT_TRUE(adapter.ok());
    std::map<std::string, slipway::io::TensorView> views;
    std::vector<std::vector<uint8_t>> buffers;
    buffers.reserve(adapter->tensors().size());
    for (const auto& [name, view] : adapter->tensors()) {
        if (name.find("lm_head") != std::string::npos) continue;  // modules_to_save would change the base
        buffers.emplace_back(view.data, view.data + view.nbytes);
        if (name.find("lora_B") != std::string::npos)
            std::fill(buffers.back().begin(), buffers.back().end(), 0);
        slipway::io::TensorView copy = view;
        copy.data = buffers.back().data();
        views[name] = copy;
    }
    ASSERT_TRUE(slipway::io::write_safetensors((zero / "adapter_model.safetensors").string(), views).ok());
    nlohmann::json config = nlohmann::json::parse(slurp((zero / "adapter_config.json").string()));
    config["modules_to_save"] = nullptr;
    std::ofstream(zero / "adapter_config.json") << config.dump(2);
    const std::vector<nlohmann::json> fresh =
        score((dir_ / "base").string(), zero.string(), "scores_zero.jsonl");
    const std::vector<nlohmann::json> plain = score((dir_ / "base").string(), "", "scores_base2.jsonl");
    ASSERT_EQ(fresh.size(), plain.size());
    for (size_t i = 0; i < fresh.size(); ++i)
        EXPECT_EQ(fresh[i]["loss"], plain[i]["loss"]) << i;
}

TEST_F(LoraCli, BadAdapterIsNamed) {
    const fs::path bad = dir_ / "bad_adapter";
    fs::create_directories(bad);
    std::ofstream(bad / "adapter_config.json")
        << R"({"peft_type": "LORA", "r": 4, "lora_alpha": 8, "target_modules": ["q_proj"]})";
    const std::string err = (dir_ / "bad.err").string();
    EXPECT_EQ(sh(kEngine + " score --model " + (dir_ / "base").string() + " --adapter " + bad.string() +
                 " --tokens " + (dir_ / "tokens.jsonl").string() + " > /dev/null 2> " + err),
              1);
    EXPECT_NE(slurp(err).find(bad.string() + "/adapter_model.safetensors"), std::string::npos) << slurp(err);
}

}  // namespace

namespace {

// Trains the fixture's run with `edit` applied; returns the train_loss values and the whole output.
std::pair<std::vector<double>, std::string> train_variant(const fs::path& dir, const std::string& name,
                                                          const std::function<void(nlohmann::json&)>& edit,
                                                          const std::string& flags = "") {
    nlohmann::json config = nlohmann::json::parse(slurp((dir / "run.json").string()));
    config["training"]["output_dir"] = (dir / ("adapter_" + name)).string();
    edit(config);
    const std::string path = (dir / ("run_" + name + ".json")).string();
    std::ofstream(path) << config.dump(2);
    const std::string log = (dir / ("train_" + name + ".out")).string();
    EXPECT_EQ(sh(kEngine + " train --threads 1 " + path + " " + flags + " > " + log + " 2>&1"), 0)
        << slurp(log);
    std::vector<double> losses;
    std::istringstream in(slurp(log));
    for (std::string line; std::getline(in, line);) {
        const size_t at = line.find(":::MLLOG ");
        if (at == std::string::npos) continue;
        const nlohmann::json j = nlohmann::json::parse(line.substr(at + 9));
        if (j["key"] == "train_loss") losses.push_back(j["value"].get<double>());
    }
    return {losses, slurp(log)};
}

}  // namespace

// QLoRA through the commands: the same run with the base as NF4 trains to losses close to LoRA's (the 4-bit
// rounding of the frozen weights is the only difference), writes a normal PEFT adapter, and that adapter
// scores on the base's -bnb-4bit copy written by `quantize` about as on the full base.
TEST_F(LoraCli, QloraTrainsCloseToLoraAndItsAdapterRunsOnTheQuantizedBase) {
    auto train = [&](const std::string& method) {
        return train_variant(dir_, method,
                             [&](nlohmann::json& config) {
                                 config["adapter"]["method"] = method;
                                 if (method == "qlora")
                                     config["adapter"]["bnb_4bit_compute_dtype"] = "float32";
                             })
            .first;
    };
    const std::vector<double> lora = train("lora"), qlora = train("qlora");
    ASSERT_EQ(lora.size(), 6u);
    ASSERT_EQ(qlora.size(), lora.size());
    for (size_t i = 0; i < lora.size(); ++i)  // measured: at most 0.14% apart (step 6)
        EXPECT_NEAR(qlora[i], lora[i], 0.01 * lora[i]) << "step " << i + 1;
    EXPECT_NE(qlora, lora) << "the 4-bit base must round the weights";
    EXPECT_TRUE(fs::exists(dir_ / "adapter_qlora" / "adapter_model.safetensors"));

    ASSERT_EQ(sh(kEngine + " quantize --double-quant --model " + (dir_ / "base").string() + " --out " +
                 (dir_ / "base_bnb").string() + " > /dev/null"),
              0);
    const nlohmann::json bnb = nlohmann::json::parse(slurp((dir_ / "base_bnb" / "config.json").string()));
    EXPECT_EQ(bnb["quantization_config"]["quant_method"], "bitsandbytes");
    EXPECT_EQ(bnb["quantization_config"]["bnb_4bit_use_double_quant"], true);
    const std::string adapter = (dir_ / "adapter_qlora").string();
    const std::vector<nlohmann::json> on_4bit =
        score((dir_ / "base_bnb").string(), adapter, "scores_4bit.jsonl");
    const std::vector<nlohmann::json> on_full = score((dir_ / "base").string(), adapter, "scores_full.jsonl");
    ASSERT_EQ(on_4bit.size(), on_full.size());
    for (size_t i = 0; i + 1 < on_4bit.size(); ++i) {  // the last line is the summary
        const double a = on_4bit[i]["loss"].get<double>(), b = on_full[i]["loss"].get<double>();
        EXPECT_NEAR(a, b, 0.02 * b) << i;
        EXPECT_NE(a, b) << i;
    }
}

// /model/base_dtype bfloat16: the frozen base held in bf16 (HF's --torch_dtype bfloat16 LoRA recipe) trains
// close to the same run with an fp32 base under the same bf16 autocast; only the base's rounding to bf16 and
// the bf16 residual stream differ. float32 (the default off GPUs) stays the exact path the other tests check.
TEST_F(LoraCli, Bf16BaseTrainsCloseToAnFp32BaseUnderBf16) {
    auto with_base = [&](const std::string& dtype) {
        return train_variant(dir_, "base_" + dtype, [&](nlohmann::json& c) {
            c["model"]["base_dtype"] = dtype;
            c["training"]["bf16"] = true;
        });
    };
    const auto [fp32, fp32_log] = with_base("float32");
    const auto [bf16, bf16_log] = with_base("bfloat16");
    ASSERT_EQ(fp32.size(), 6u);
    ASSERT_EQ(bf16.size(), fp32.size());
    EXPECT_NE(fp32_log.find("in float32, 4 q|k|v and gate|up groups packed"), std::string::npos) << fp32_log;
    EXPECT_NE(bf16_log.find("in bfloat16, 4 q|k|v and gate|up groups packed"), std::string::npos) << bf16_log;
    for (size_t i = 0; i < fp32.size(); ++i)  // bf16 rounds each weight and activation by <= 2^-9 relative
        EXPECT_NEAR(bf16[i], fp32[i], 0.01 * fp32[i]) << "step " << i + 1;
    EXPECT_NE(bf16, fp32) << "a bf16 base must round the weights";
}

TEST_F(LoraCli, Bf16BaseIsRefusedWhereTheBaseTrains) {
    nlohmann::json config = nlohmann::json::parse(slurp((dir_ / "run.json").string()));
    config["model"]["base_dtype"] = "bfloat16";
    config["adapter"] = {{"method", "full"}};
    const std::string path = (dir_ / "run_full_bf16.json").string();
    std::ofstream(path) << config.dump(2);
    const std::string err = (dir_ / "full_bf16.err").string();
    EXPECT_NE(sh(kEngine + " train --threads 1 " + path + " > /dev/null 2> " + err), 0);
    EXPECT_NE(slurp(err).find("/model/base_dtype"), std::string::npos) << slurp(err);
}

// --profile_steps A:B: the trace Perfetto opens, the steps as ranges in it, and the table by category.
TEST_F(LoraCli, ProfileStepsWriteATraceAndATable) {
    const auto [losses, log] = train_variant(
        dir_, "profiled", [](nlohmann::json&) {}, "--profile_steps 2:3");
    ASSERT_EQ(losses.size(), 6u);
    EXPECT_NE(log.find("profile: 2 step(s)"), std::string::npos) << log;
    EXPECT_NE(log.find("| fp32 GEMM"), std::string::npos) << log;
    EXPECT_NE(log.find("| host gaps"), std::string::npos) << log;
    const nlohmann::json trace =
        nlohmann::json::parse(slurp((dir_ / "adapter_profiled" / "profile" / "trace.json").string()));
    std::set<std::string> ranges;
    int64_t operators = 0;
    for (const auto& e : trace["traceEvents"]) {
        if (e.value("cat", "") == "slipway") ranges.insert(e["name"].get<std::string>());
        if (e.value("cat", "") == "cpu_op") ++operators;
    }
    EXPECT_EQ(ranges, (std::set<std::string>{"step 2", "step 3", "forward", "backward", "optimizer"}));
    // Kineto records ATen operators on this CPU build; without it the table would say so.
    EXPECT_GT(operators, 0) << log;
    const std::string err = (dir_ / "profile_bad.err").string();
    EXPECT_NE(sh(kEngine + " train --threads 1 " + (dir_ / "run.json").string() +
                 " --profile_steps 3:2 > /dev/null 2> " + err),
              0);
    EXPECT_NE(slurp(err).find("/training/profile_steps"), std::string::npos) << slurp(err);
}
