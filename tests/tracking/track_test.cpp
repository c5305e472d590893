// The trackers' encoders and their failure rule: CRC-32C against its published check value, TFRecord framing,
// the MLLOG -> tag table, and a run whose disk fills while it writes TensorBoard events (one warning, no
// stop). TensorBoard's own reader checks the files a real run writes: tensorboard_check.py.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "contract/faulty_file_system.h"
#include "contract/mllog.h"
#include "contract/run_config.h"
#include "track/crc32c.h"
#include "track/metric_points.h"
#include "track/run_trackers.h"
#include "track/tensorboard_events.h"

namespace slipway::track {
namespace {

namespace fs = std::filesystem;

MllogEvent point(std::string key, MllogJson value, MllogJson metadata = MllogJson::object()) {
    MllogEvent event;
    event.time_ms = 1'700'000'000'123;
    event.event_type = std::string(kPointInTime);
    event.key = std::move(key);
    event.value = std::move(value);
    event.metadata = std::move(metadata);
    return event;
}

TEST(Crc32c, MatchesThePublishedCheckValue) {
    EXPECT_EQ(crc32c("123456789"), 0xE3069283U);  // RFC 3720's CRC-32C check value
    EXPECT_EQ(crc32c(""), 0U);
    EXPECT_EQ(crc32c("6789", crc32c("12345")), crc32c("123456789"));
}

TEST(TfRecord, FramesTheDataWithItsLengthAndMaskedChecksums) {
    const std::string record = tfrecord("hello");
    ASSERT_EQ(record.size(), 8U + 4 + 5 + 4);
    uint64_t length = 0;
    std::memcpy(&length, record.data(), 8);
    EXPECT_EQ(length, 5U);
    uint32_t length_crc = 0, data_crc = 0;
    std::memcpy(&length_crc, record.data() + 8, 4);
    std::memcpy(&data_crc, record.data() + 17, 4);
    EXPECT_EQ(length_crc, masked_crc32c(record.substr(0, 8)));
    EXPECT_EQ(data_crc, masked_crc32c("hello"));
    EXPECT_EQ(record.substr(12, 5), "hello");
}

TEST(MetricNamer, NamesTheEnginesKeysAsHfTrainerDoes) {
    MetricNamer namer;
    EXPECT_EQ(namer.points(point("train_samples", 400)).at(0).tag, "mllog/train_samples");
    const auto loss = namer.points(point("train_loss", 2.5, {{"samples_count", 100}, {"step_num", 10}}));
    ASSERT_EQ(loss.size(), 2U);
    EXPECT_EQ(loss[0].tag, "train/loss");
    EXPECT_EQ(loss[0].step, 10);
    EXPECT_DOUBLE_EQ(loss[0].value, 2.5);
    EXPECT_DOUBLE_EQ(loss[0].wall_time, 1'700'000'000.123);
    EXPECT_EQ(loss[1].tag, "train/epoch");
    EXPECT_DOUBLE_EQ(loss[1].value, 0.25);
    EXPECT_EQ(namer.points(point("lr", 1e-3, {{"step_num", 10}})).at(0).tag, "train/learning_rate");
    EXPECT_EQ(namer.points(point("eval_accuracy", 0.5, {{"step_num", 10}})).at(0).tag, "eval/accuracy");
    const auto task =
        namer.points(point("eval_task", 0.75, {{"task", "arc"}, {"metric", "acc_norm"}, {"step_num", 4}}));
    EXPECT_EQ(task.at(0).tag, "eval/arc/acc_norm");
    // An MLPerf log's eval_accuracy carries epoch_num or samples_count instead of a step.
    EXPECT_EQ(namer.points(point("eval_accuracy", 0.7, {{"epoch_num", 3}})).at(0).step, 3);
    EXPECT_TRUE(namer.points(point("checkpoint_saved", "out/checkpoint-10")).empty());
    EXPECT_TRUE(namer.points(point("cache_clear", true)).empty());
}

TEST(ReportTo, NamesTheTargetsAndTheFolder) {
    EXPECT_TRUE(report_targets({"tensorboard"}).tensorboard);
    EXPECT_TRUE(report_targets({"all"}).tensorboard);
    EXPECT_FALSE(report_targets({"none"}).tensorboard);
    EXPECT_FALSE(report_targets({}).tensorboard);
    RunConfig config;
    config.name = "a/b";
    config.training.output_dir = "out";
    EXPECT_EQ(tensorboard_dir(config), "out/runs/a_b");
    config.training.logging_dir = "/logs/x";
    EXPECT_EQ(tensorboard_dir(config), "/logs/x");
}

TEST(ReportTo, BadNamesAreErrorsAtTheirIndex) {
    RunConfig config;
    config.training.report_to = {"tensorboard", "wandb", "tensorbord", "mlflow"};
    const std::string problems = format_problems(validate(config));
    EXPECT_NE(problems.find("/training/report_to/1: must be tensorboard, mlflow, all or none, got \"wandb\" "
                            "(the engine does not write wandb runs)"),
              std::string::npos)
        << problems;
    EXPECT_NE(problems.find("/training/report_to/2: must be tensorboard, mlflow, all or none, got "
                            "\"tensorbord\" (did you mean \"tensorboard\"?)"),
              std::string::npos)
        << problems;
    EXPECT_EQ(problems.find("/training/report_to/3"), std::string::npos) << problems;
    config.training.report_to = {"none", "tensorboard"};
    EXPECT_NE(format_problems(validate(config)).find("\"none\" cannot be listed with other trackers"),
              std::string::npos);
}

TEST(RunTrackers, AFullDiskIsOneWarningNamingWhatTensorBoardLacks) {
    const fs::path dir = fs::path(testing::TempDir()) / "tracker_full_disk";
    fs::remove_all(dir);
    RunConfig config;
    config.training.logging_dir = dir.string();
    FaultyFileSystem faulty;
    faulty.fill_disk_after(20000, "tfevents");  // the config text and hparams fit; not every point
    std::vector<std::string> warnings;
    const auto warn = [&](const std::string& m) { warnings.push_back(m); };
    RunTrackers trackers(config, warn, /*fresh=*/true, faulty);
    for (int step = 1; step <= 1000; ++step)
        trackers.on_event(point("train_loss", 1.0 / step, {{"samples_count", step * 8}, {"step_num", step}}));
    trackers.on_event(point("run_stop", nullptr, {{"status", "success"}}));
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_NE(warnings[0].find("tensorboard: " + dir.string() + "/events.out.tfevents."), std::string::npos)
        << warnings[0];
    EXPECT_NE(warnings[0].find("No space left on device"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("train/loss at step "), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("are not in TensorBoard (mllog.txt has them)"), std::string::npos)
        << warnings[0];
}

TEST(RunTrackers, NoneWritesNothing) {
    const fs::path dir = fs::path(testing::TempDir()) / "tracker_none";
    fs::remove_all(dir);
    RunConfig config;
    config.training.logging_dir = dir.string();
    config.training.report_to = {"none"};
    RunTrackers trackers(
        config, [](const std::string&) { FAIL(); }, /*fresh=*/true);
    trackers.on_event(point("train_loss", 1.0, {{"step_num", 1}}));
    EXPECT_TRUE(trackers.destinations().empty());
    EXPECT_FALSE(fs::exists(dir));
}

// A fresh run in the same output_dir starts its default folder again, as it starts mllog.txt again; a resumed
// run keeps the earlier files, and a folder the config names is never cleared.
TEST(RunTrackers, AFreshRunDropsTheEarlierRunsEventFilesFromItsDefaultFolder) {
    const fs::path out = fs::path(testing::TempDir()) / "tracker_fresh";
    fs::remove_all(out);
    RunConfig config;
    config.name = "r";
    config.training.output_dir = out.string();
    const fs::path folder = out / "runs" / "r";
    const auto plant = [&] {
        fs::create_directories(folder);
        std::ofstream(folder / "events.out.tfevents.1.host.1.0") << "earlier";
        std::ofstream(folder / "notes.txt") << "the user's";
    };
    const auto no_warning = [](const std::string& m) { FAIL() << m; };
    plant();
    { RunTrackers resumed(config, no_warning, /*fresh=*/false); }
    EXPECT_TRUE(fs::exists(folder / "events.out.tfevents.1.host.1.0"));
    { RunTrackers fresh(config, no_warning, /*fresh=*/true); }
    EXPECT_FALSE(fs::exists(folder / "events.out.tfevents.1.host.1.0"));
    EXPECT_TRUE(fs::exists(folder / "notes.txt"));
    plant();
    config.training.logging_dir = folder.string();
    { RunTrackers named(config, no_warning, /*fresh=*/true); }
    EXPECT_TRUE(fs::exists(folder / "events.out.tfevents.1.host.1.0"));
}

}  // namespace
}  // namespace slipway::track
