// The MLPerf llama2_70b_lora preset, run for a few steps on a tiny random model put in through HF flags
// (model, tokenizer, data, block size, steps): its log passes every rule of the training 4.0.0
// compliance checker (our implementation, contract/mlperf_compliance) but the convergence target, and
// still carries the lines the monitor plots. A run without /mlperf writes none of the MLPerf-only lines.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "contract/log_summary.h"
#include "contract/mllog.h"
#include "contract/mlperf_compliance.h"
#include "test_paths.h"
#include "tiny_run_support.h"

namespace {

using slipway::testing_support::kSource;
using slipway::testing_support::mllog_events;
using slipway::testing_support::slurp;
namespace fs = std::filesystem;

int sh(const std::string& command) {
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class MlperfLog : public slipway::testing_support::TinyRunTest {
protected:
    // The first 540 documents of the test's data train, the other 60 validate (the preset names a
    // validation file, as gov_report has one).
    void split_data() {
        std::ifstream all(dir_ / "data.jsonl");
        std::ofstream train(dir_ / "train.jsonl"), validation(dir_ / "validation.jsonl");
        std::string line;
        for (int i = 0; std::getline(all, line); ++i)
            (i < 540 ? train : validation) << line << "\n";
    }
};

TEST_F(MlperfLog, PresetRunPassesEveryComplianceRuleButConvergence) {
    split_data();
    const std::string engine = test_paths::engine_bin();
    ASSERT_EQ(sh(engine + " init-model --config " + (dir_ / "model" / "config.json").string() + " --out " +
                 (dir_ / "tiny").string() + " --seed 3 > /dev/null"),
              0);
    const fs::path out = dir_ / "mlperf";
    const std::string command =
        engine + " train --threads 1 " + kSource + "/resources/presets/mlperf-llama2-70b-lora.json" +
        " --model_name_or_path " + (dir_ / "tiny").string() + " --torch_dtype float32" +
        " --tokenizer_name " + kSource + "/resources/demo/tokenizer.json" + " --train_file " +
        (dir_ / "train.jsonl").string() + " --validation_file " + (dir_ / "validation.jsonl").string() +
        " --block_size 32 --max_steps 6 --eval_steps 3 --logging_steps 1 --per_device_train_batch_size 2 "
        "--output_dir " +
        out.string() + " > " + (dir_ / "stdout.txt").string() + " 2> " + (dir_ / "stderr.txt").string();
    ASSERT_EQ(sh(command), 0) << slurp((dir_ / "stderr.txt").string());

    // What the job prints (the log a submitter hands in) and the copy in output_dir are both compliant.
    for (const fs::path& log : {out / "mllog.txt", dir_ / "stdout.txt"}) {
        const slipway::MlperfComplianceReport report = slipway::check_mlperf_compliance(slurp(log.string()));
        const std::vector<std::string> except = {std::string(slipway::kMlperfConvergenceRule)};
        EXPECT_TRUE(report.passed_except(except)) << log << "\n" << report.failures_text(except);
        EXPECT_GT(report.rules.size(), 50u);
    }

    const std::string mllog = (out / "mllog.txt").string();
    // Two blocks of training, each closed before its evaluation, with the samples seen so far.
    const auto starts = mllog_events(mllog, "block_start"), stops = mllog_events(mllog, "block_stop");
    ASSERT_EQ(starts.size(), 2u);
    ASSERT_EQ(stops.size(), 2u);
    EXPECT_EQ(starts[0].samples_count(), 0);
    EXPECT_EQ(stops[0].samples_count(), 6);  // 3 steps x global batch 2
    EXPECT_EQ(starts[1].samples_count(), 6);
    EXPECT_EQ(stops[1].samples_count(), 12);
    const auto accuracy = mllog_events(mllog, "eval_accuracy");
    ASSERT_EQ(accuracy.size(), 2u);
    EXPECT_EQ(accuracy[1].samples_count(), 12);
    EXPECT_EQ(mllog_events(mllog, "lora_rank").at(0).value, 16);
    EXPECT_EQ(mllog_events(mllog, "submission_benchmark").at(0).value, "llama2_70b_lora");
    EXPECT_EQ(mllog_events(mllog, "submission_division").at(0).value, "closed");

    // The monitor's reader sees the same run: losses, and an aborted end (the target was not reached).
    auto summary = slipway::summarize_log_file(mllog);
    ASSERT_TRUE(summary.ok()) << summary.error();
    EXPECT_EQ(summary->status, "aborted");
    EXPECT_EQ(summary->train_loss.size(), 6u);
}

TEST_F(MlperfLog, RunWithoutMlperfSectionWritesNoSubmissionLines) {
    const std::string config = write_config("plain", {{"training", {{"max_steps", 2}, {"eval_steps", 2}}}});
    ASSERT_EQ(sh(std::string(test_paths::engine_bin()) + " train --threads 1 " + config + " > /dev/null 2> " +
                 (dir_ / "stderr.txt").string()),
              0)
        << slurp((dir_ / "stderr.txt").string());
    const std::string mllog = (dir_ / "plain" / "mllog.txt").string();
    for (const char* key :
         {"cache_clear", "submission_benchmark", "submission_org", "block_start", "block_stop"})
        EXPECT_TRUE(mllog_events(mllog, key).empty()) << key;
    EXPECT_EQ(mllog_events(mllog, "eval_accuracy").size(), 1u);
}

}  // namespace
