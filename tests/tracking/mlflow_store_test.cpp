// The MLflow file store run the engine writes: its layout and meta.yaml, a resumed run going on in its MLflow
// run, and a full disk as one warning. MLflow's own reader checks the same files in mlflow_check.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "contract/faulty_file_system.h"
#include "contract/mllog.h"
#include "contract/run_config.h"
#include "track/mlflow_store.h"
#include "track/mlflow_tracker.h"
#include "track/run_trackers.h"

namespace slipway::track {
namespace {

namespace fs = std::filesystem;

std::string text_of(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
}

MllogEvent event_at(int64_t time_ms, std::string key, MllogJson value,
                    MllogJson metadata = MllogJson::object()) {
    MllogEvent event;
    event.time_ms = time_ms;
    event.event_type = std::string(kPointInTime);
    event.key = std::move(key);
    event.value = std::move(value);
    event.metadata = std::move(metadata);
    return event;
}

std::vector<fs::path> runs_in(const fs::path& store) {
    std::vector<fs::path> runs;
    for (const auto& entry : fs::directory_iterator(store / "0"))
        if (entry.is_directory()) runs.push_back(entry.path());
    return runs;
}

TEST(MlflowKey, KeepsWhatMlflowAcceptsAndNeverLeavesTheFolder) {
    EXPECT_EQ(mlflow_key("train/loss"), "train/loss");
    EXPECT_EQ(mlflow_key("eval/arc/acc,none"), "eval/arc/acc_none");
    EXPECT_EQ(mlflow_key("/../x"), "_./x");
    EXPECT_EQ(mlflow_key(""), "_");
}

TEST(MlflowRun, WritesTheFileStoreLayout) {
    const fs::path store = fs::path(testing::TempDir()) / "mlflow_layout";
    fs::remove_all(store);
    Result<std::unique_ptr<MlflowRun>> run =
        MlflowRun::create(store.string(), "demo: \"a\"", 1'700'000'000'000);
    ASSERT_TRUE(run.ok()) << run.error();
    MlflowRun& r = **run;
    EXPECT_EQ(r.run_id().size(), 32U);
    ASSERT_TRUE(r.metric("train/loss", 8.5, 1'700'000'000'100, 1).ok());
    ASSERT_TRUE(r.metric("train/loss", 0.1, 1'700'000'000'200, 2).ok());
    ASSERT_TRUE(r.param("training.learning_rate", "0.0002").ok());
    ASSERT_TRUE(r.terminate(MlflowRunStatus::kFinished, 1'700'000'001'000).ok());

    const fs::path dir = store / "0" / r.run_id();
    EXPECT_EQ(text_of(dir / "metrics" / "train" / "loss"), "1700000000100 8.5 1\n1700000000200 0.1 2\n");
    EXPECT_EQ(text_of(dir / "params" / "training.learning_rate"), "0.0002");
    EXPECT_EQ(text_of(dir / "tags" / "mlflow.runName"), "demo: \"a\"");
    const std::string meta = text_of(dir / "meta.yaml");
    EXPECT_NE(meta.find("run_name: \"demo: \\\"a\\\"\"\n"), std::string::npos) << meta;
    EXPECT_NE(meta.find("status: 3\n"), std::string::npos) << meta;
    EXPECT_NE(meta.find("end_time: 1700000001000\n"), std::string::npos) << meta;
    EXPECT_NE(meta.find("experiment_id: '0'\n"), std::string::npos) << meta;
    EXPECT_NE(text_of(store / "0" / "meta.yaml").find("name: Default\n"), std::string::npos);
}

RunConfig mlflow_config(const fs::path& out) {
    RunConfig config;
    config.name = "r";
    config.training.output_dir = out.string();
    config.training.report_to = {"mlflow"};
    return config;
}

// A requeued run resumes: its points go on in the MLflow run it started, which ends FINISHED once.
TEST(MlflowTracker, AResumedRunGoesOnInItsMlflowRun) {
    const fs::path out = fs::path(testing::TempDir()) / "mlflow_resume";
    fs::remove_all(out);
    const RunConfig config = mlflow_config(out);
    const auto no_warning = [](const std::string& m) { FAIL() << m; };
    {
        RunTrackers first(config, no_warning, /*fresh=*/true);
        EXPECT_EQ(first.destinations(), std::vector<std::string>{"mlflow: " + out.string() + "/mlruns"});
        first.on_event(event_at(1'000'000, "train_loss", 2.0, {{"step_num", 1}}));
    }  // preempted: no run_stop
    const std::vector<fs::path> started = runs_in(out / "mlruns");
    ASSERT_EQ(started.size(), 1U);
    EXPECT_NE(text_of(started[0] / "meta.yaml").find("status: 1\n"), std::string::npos);
    EXPECT_NE(text_of(started[0] / "params" / "training.output_dir").find(out.string()), std::string::npos);
    {
        RunTrackers resumed(config, no_warning, /*fresh=*/false);
        resumed.on_event(event_at(2'000'000, "train_loss", 1.5, {{"step_num", 2}}));
        resumed.on_event(event_at(2'000'500, "run_stop", nullptr, {{"status", "success"}}));
    }
    ASSERT_EQ(runs_in(out / "mlruns"), started);
    EXPECT_EQ(text_of(started[0] / "metrics" / "train" / "loss"), "1000000 2 1\n2000000 1.5 2\n");
    const std::string meta = text_of(started[0] / "meta.yaml");
    EXPECT_NE(meta.find("status: 3\n"), std::string::npos) << meta;
    EXPECT_NE(meta.find("start_time: 1000000\n"), std::string::npos) << meta;
    {
        RunTrackers again(config, no_warning, /*fresh=*/true);  // a fresh run is a new MLflow run
        again.on_event(event_at(3'000'000, "run_stop", nullptr, {{"status", "aborted"}}));
    }
    const std::vector<fs::path> both = runs_in(out / "mlruns");
    ASSERT_EQ(both.size(), 2U);
    const fs::path second = both[0] == started[0] ? both[1] : both[0];
    EXPECT_NE(text_of(second / "meta.yaml").find("status: 4\n"), std::string::npos);
}

TEST(MlflowTracker, AFullDiskIsOneWarningNamingWhatTheRunLacks) {
    const fs::path out = fs::path(testing::TempDir()) / "mlflow_full_disk";
    fs::remove_all(out);
    RunConfig config = mlflow_config(out);
    config.training.report_to = {"all"};
    FaultyFileSystem faulty;
    faulty.fill_disk_after(300, "metrics");  // the run and its params fit; not every point
    std::vector<std::string> warnings;
    RunTrackers trackers(
        config, [&](const std::string& m) { warnings.push_back(m); }, /*fresh=*/true, faulty);
    for (int step = 1; step <= 100; ++step)
        trackers.on_event(event_at(1'000'000 + step, "train_loss", 1.0 / step, {{"step_num", step}}));
    trackers.on_event(event_at(2'000'000, "run_stop", nullptr, {{"status", "success"}}));
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_EQ(warnings[0].rfind("mlflow: ", 0), 0U) << warnings[0];
    EXPECT_NE(warnings[0].find("No space left on device"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("train/loss at step "), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("are not in the MLflow run (mllog.txt has them)"), std::string::npos)
        << warnings[0];
    // TensorBoard, the other target, kept every point.
    EXPECT_TRUE(fs::exists(out / "runs" / "r"));
}

}  // namespace
}  // namespace slipway::track
