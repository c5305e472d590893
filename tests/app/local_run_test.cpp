// End to end on "This computer" (offscreen): the demo run submitted from the editor runs slipway-engine
// (shortened with --max_steps), its MLLOG is plotted while it runs, and the run and its points land in the
// history. Skipped when no engine binary was built. Also the engine command line and the run plan.
#include <gtest/gtest.h>

#include <QFileInfo>
#include <QTemporaryDir>

#include "core/engine_command.h"
#include "editor/run_editor.h"
#include "history/run_history.h"
#include "main_window.h"
#include "monitor/metric_plot.h"
#include "monitor/monitor_widget.h"
#include "runs/run_tracker.h"
#include "service/local_executor.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

TEST(EngineCommand, OneFunctionBuildsTheCommandLine) {
    using Words = std::vector<std::string>;
    EXPECT_EQ(engine_arguments("/r/run.json", 2, {"--max_steps", "10"}, 8),
              (Words{"launch", "--nproc", "2", "--", "train", "--threads", "4", "/r/run.json", "--max_steps",
                     "10"}));
    EXPECT_EQ(engine_arguments("/r/run.json", 4, {}, 2),
              (Words{"launch", "--nproc", "4", "--", "train", "--threads", "1", "/r/run.json"}));
    EXPECT_EQ(command_line("slipway-engine", {"train", "run.json"}), "slipway-engine train run.json");
}

TEST(LocalRunPlan, ResolvesInputsWritesRunJsonAndRefusesWithoutAnEngine) {
    testing_util::IsolatedHome home;
    QTemporaryDir runs;
    const Result<RunConfig> demo =
        load_run_config(test_paths::source_dir("/resources/presets/demo-tiny.json"));
    ASSERT_TRUE(demo.ok()) << demo.error();
    EXPECT_FALSE(plan_local_run(*demo, test_paths::source_dir(), runs.path().toStdString(), "").ok());
    const Result<LocalRunPlan> plan =
        plan_local_run(*demo, test_paths::source_dir(), runs.path().toStdString(), "/bin/true");
    ASSERT_TRUE(plan.ok()) << plan.error();
    EXPECT_EQ(plan->config.model.path, test_paths::source_dir("/resources/demo/model"));
    EXPECT_EQ(plan->config.data.train_file, test_paths::source_dir("/resources/demo/corpus.jsonl"));
    EXPECT_EQ(plan->run_dir.rfind(runs.path().toStdString() + "/demo-tiny-", 0), 0u) << plan->run_dir;
    EXPECT_EQ(plan->config.training.output_dir, plan->run_dir + "/output");
    EXPECT_EQ(plan->mllog_path, plan->config.training.output_dir + "/mllog.txt");
    EXPECT_EQ(plan->engine_log, plan->run_dir + "/engine.log");
    const Result<RunConfig> written = load_run_config(plan->run_json);
    ASSERT_TRUE(written.ok()) << written.error();
    EXPECT_EQ(to_json(*written), to_json(plan->config));
    EXPECT_EQ(std::vector<std::string>(plan->arguments.begin(), plan->arguments.begin() + 3),
              (std::vector<std::string>{"launch", "--nproc", "2"}));  // ntasks_per_node 2
}

TEST(LocalRunEndToEnd, DemoOnThisComputerIsPlottedLiveAndStored) {
    const QString engine = QString::fromUtf8(test_paths::engine_bin());
    if (!QFileInfo(engine).isExecutable()) GTEST_SKIP() << "no slipway-engine at " << engine.toStdString();
    testing_util::IsolatedHome home;
    qputenv("SLIPWAY_ENGINE", engine.toUtf8());
    MainWindow window(home.path() + "/history.sqlite");
    window.show();
    ASSERT_TRUE(window.editor()->load_preset("demo-tiny").ok());
    ASSERT_TRUE(window.editor()->document().valid());

    int finished_code = -100;
    QObject::connect(&window, &MainWindow::local_run_finished, [&](int, int code) { finished_code = code; });
    QStringList notified;
    QObject::connect(&window, &MainWindow::notified,
                     [&](const QString& title, const QString&) { notified << title; });
    const Result<int> key =
        window.submit_local({"--max_steps", "10", "--warmup_steps", "2", "--eval_steps", "5"});
    ASSERT_TRUE(key.ok()) << key.error();
    const MonitorWidget* monitor = window.monitor();
    // Points appear while the engine still runs.
    bool seen_live = false;
    QObject::connect(window.tracker(), &RunTracker::batch_applied, [&](int k) {
        if (k == *key && finished_code == -100 &&
            !monitor->run(k)->metrics.points(Metric::kTrainLoss).empty()) {
            seen_live = true;
        }
    });
    ASSERT_TRUE(testing_util::wait_until([&] { return finished_code != -100; }, 180'000))
        << "the demo did not end";
    EXPECT_EQ(finished_code, 0) << monitor->log_view()->toPlainText().right(2000).toStdString();
    ASSERT_TRUE(testing_util::wait_until([&] { return monitor->run(*key)->follow_id == 0; }));
    EXPECT_TRUE(seen_live);
    const TrackedRun* run = monitor->run(*key);
    // logging_steps 5 and eval_steps 5 over 10 steps: train_loss, lr, tokens/s at 5 and 10; two evals.
    EXPECT_EQ(run->metrics.points(Metric::kTrainLoss).size(), 2u);
    EXPECT_EQ(run->metrics.points(Metric::kLearningRate).size(), 2u);
    EXPECT_EQ(run->metrics.points(Metric::kTokensPerSecond).size(), 2u);
    EXPECT_EQ(run->metrics.points(Metric::kEvalAccuracy).size(), 2u);
    EXPECT_EQ(monitor->plot(Metric::kTrainLoss)->raw_graph(*key)->dataCount(), 2);
    EXPECT_EQ(run->metrics.status, "success");
    // The demo evaluates the loss (eval.metric "loss") and logs it as eval_accuracy, as MLPerf does.
    EXPECT_EQ(run->metrics.eval_meaning, EvalMeaning::kLoss);
    EXPECT_EQ(monitor->plot(Metric::kEvalAccuracy)->title(), "eval loss (MLPerf eval_accuracy)");
    EXPECT_EQ(run->state, RunState::kCompleted);
    EXPECT_TRUE(notified.join("\n").contains("finished")) << notified.join("\n").toStdString();

    const Result<std::vector<StoredRun>> runs = window.history()->runs();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ(runs->front().state, RunState::kCompleted);
    EXPECT_EQ(runs->front().cluster, "This computer");
    EXPECT_FALSE(runs->front().job_id.empty());
    EXPECT_EQ(*window.history()->point_count(runs->front().id), 8);
    EXPECT_EQ(runs->front().log_offset,
              static_cast<uint64_t>(QFileInfo(QString::fromStdString(run->log_path)).size()));
    qunsetenv("SLIPWAY_ENGINE");
}

}  // namespace
}  // namespace slipway::app
