// Shared by the tests that run slipway-engine on a tiny model: a per-test folder with a tiny LLaMA config
// over the demo tokenizer and the first 600 demo documents, run configs patched per test, and readers for
// the outputs (MLLOG events, safetensors values).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/mllog.h"
#include "test_paths.h"

namespace slipway::testing_support {

namespace fs = std::filesystem;
inline const std::string kSource = test_paths::source_dir();

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Events of `key` (all when empty) in an MLLOG text file, in order.
inline std::vector<MllogEvent> mllog_events(const std::string& path, const std::string& key = "") {
    std::vector<MllogEvent> out;
    std::istringstream in(slurp(path));
    std::string line;
    while (std::getline(in, line)) {
        const MllogParseResult r = parse_mllog_line(line);
        if (r.kind == MllogLineKind::kEvent && (key.empty() || r.event.key == key)) out.push_back(r.event);
    }
    return out;
}

// The run's one run_stop: status fail at `step`, its metadata.error naming `cause`.
inline void expect_failed_run_stop(const std::string& mllog, int64_t step, const std::string& cause) {
    const std::vector<MllogEvent> stops = mllog_events(mllog, "run_stop");
    ASSERT_EQ(stops.size(), 1u) << mllog;
    EXPECT_EQ(stops[0].metadata["status"], "fail");
    EXPECT_EQ(stops[0].metadata["step_num"], step);
    EXPECT_NE(stops[0].metadata["error"].get<std::string>().find(cause), std::string::npos)
        << stops[0].metadata.dump();
}

class TinyRunTest : public testing::Test {
public:  // test helpers call write_config too
    void SetUp() override {
        dir_ = fs::path(testing::TempDir()) /
               (std::string(testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) + "_" +
                testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "model");
        std::ofstream(dir_ / "model" / "config.json")
            << R"({"vocab_size": 4096, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 1, "num_attention_heads": 2, "max_position_embeddings": 128, "tie_word_embeddings": false})";
        std::ifstream corpus(kSource + "/resources/demo/corpus.jsonl");
        std::ofstream data(dir_ / "data.jsonl");
        std::string line;
        for (int i = 0; i < 600 && std::getline(corpus, line); ++i)
            data << line << "\n";
    }

    // A run config for this test's folder; `patch` is merged over it (JSON merge patch).
    std::string write_config(const std::string& name, const nlohmann::json& patch) {
        nlohmann::json c = {
            {"name", name},
            {"model", {{"path", (dir_ / "model").string()}, {"dtype", "float32"}, {"init", "random"}}},
            {"tokenizer", {{"path", kSource + "/resources/demo/tokenizer.json"}}},
            {"data",
             {{"train_file", (dir_ / "data.jsonl").string()},
              {"block_size", 32},
              {"validation_split_percentage", 10},
              {"cache_dir", (dir_ / "cache").string()}}},
            {"training",
             {{"learning_rate", 3e-3},
              {"max_steps", 12},
              {"per_device_train_batch_size", 4},
              {"per_device_eval_batch_size", 8},
              {"logging_steps", 1},
              {"eval_steps", 6},
              {"seed", 5},
              {"output_dir", (dir_ / name).string()}}},
            {"adapter", {{"method", "full"}}},
            {"slurm", {{"gpus_per_node", 0}}},
        };
        if (patch.is_object())
            c.merge_patch(patch);  // {} in an initializer is null, which would replace everything
        const std::string path = (dir_ / (name + ".json")).string();
        std::ofstream(path) << c.dump(2);
        return path;
    }

    // One slipway-engine command; stdout goes to <dir>/stdout.txt. `env`: variables for the engine, e.g.
    // "SLIPWAY_FS_FAULT=enospc_after_bytes:0:config.json".
    struct EngineRun {
        int exit_code = -1;
        std::string err;
    };
    EngineRun run_engine(const std::string& args, const std::string& env = "") const {
        const std::string err = (dir_ / "stderr.txt").string();
        const std::string command = env + " " + test_paths::engine_bin() + " " + args + " >" +
                                    (dir_ / "stdout.txt").string() + " 2>" + err;
        const int status = std::system(command.c_str());
        return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(err)};
    }

    fs::path dir_;
};

}  // namespace slipway::testing_support
