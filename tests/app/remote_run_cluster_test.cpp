// End to end on the local test cluster (tests/cluster: real sshd + Slurm on 127.0.0.1; label cluster):
// the demo run submitted from the window to a cluster profile is deployed and sbatch'ed on the cluster's
// worker thread, its slurm-N.out is followed live into the monitor over SSH, the job state comes from
// Slurm, and the run and its points land in the history. Skipped when the cluster or the engine is absent.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QPlainTextEdit>

#include "clusters_page.h"
#include "core/run_state_display.h"
#include "editor/run_editor.h"
#include "history/run_history.h"
#include "main_window.h"
#include "monitor/monitor_widget.h"
#include "runs/run_tracker.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

TEST(RemoteRunEndToEnd, DemoOnTheLocalClusterIsFollowedLive) {
    const QString engine = QString::fromUtf8(test_paths::engine_bin());
    if (!QFileInfo(engine).isExecutable()) GTEST_SKIP() << "no slipway-engine at " << engine.toStdString();
    std::map<QString, QString> env = testing_util::use_local_cluster(engine);
    if (env.empty()) GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
    testing_util::IsolatedHome home;

    MainWindow window(home.path() + "/history.sqlite");
    window.show();
    const remote::ClusterProfile p =
        testing_util::local_cluster_profile(env, env["SLIPWAY_REMOTE_DIR"] + "/gui-e2e");
    ASSERT_TRUE(window.clusters_page()->add_profile(p).ok());

    RunEditor* editor = window.editor();
    ASSERT_TRUE(editor->load_preset("demo-tiny").ok());
    editor->edit("/training/max_steps", 10);
    editor->edit("/training/warmup_steps", 2);
    editor->edit("/training/eval_steps", 5);
    editor->target_box()->setCurrentText("local-slurm");
    ASSERT_TRUE(editor->document().valid()) << format_problems(editor->document().problems());
    QStringList notified;
    QObject::connect(&window, &MainWindow::notified,
                     [&](const QString& title, const QString&) { notified << title; });
    const Result<int> key = window.submit_current();
    ASSERT_TRUE(key.ok()) << key.error();
    const MonitorWidget* monitor = window.monitor();
    QStringList states;  // what the run went through, for the failure message
    QObject::connect(window.tracker(), &RunTracker::run_changed, [&](int k) {
        const TrackedRun* r = window.tracker()->run(k);
        if (k == *key && r != nullptr && (states.isEmpty() || states.back() != display_text(r->state)))
            states << display_text(r->state);
    });
    ASSERT_TRUE(testing_util::wait_until([&] { return !notified.isEmpty(); }, 300'000))
        << "no end of the job";
    const TrackedRun* run = monitor->run(*key);
    // Slurm's own state ends the run (asked right after the log's run_stop).
    EXPECT_TRUE(testing_util::wait_until([&] { return run->state == RunState::kCompleted; }, 60'000))
        << states.join(" -> ").toStdString() << "\n"
        << monitor->log_view()->toPlainText().right(3000).toStdString();
    ASSERT_TRUE(testing_util::wait_until([&] { return run->metrics.status.has_value(); }, 30'000));
    EXPECT_EQ(run->metrics.points(Metric::kTrainLoss).size(), 2u);
    EXPECT_EQ(run->metrics.points(Metric::kEvalAccuracy).size(), 2u);
    EXPECT_EQ(run->metrics.status, "success");
    EXPECT_TRUE(notified.join("\n").contains("finished")) << notified.join("\n").toStdString();
    EXPECT_EQ(run->slurm_state, "COMPLETED");
    const auto runs = window.history()->runs();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ(runs->front().cluster, "local-slurm");
    EXPECT_EQ(runs->front().state, RunState::kCompleted);
    EXPECT_EQ(runs->front().slurm_state, "COMPLETED");
    EXPECT_FALSE(runs->front().job_id.empty());
    const std::string& log = runs->front().log_path;
    EXPECT_TRUE(log.size() > 4 && log.compare(log.size() - 4, 4, ".out") == 0) << log;
    EXPECT_GE(*window.history()->point_count(runs->front().id), 8);
    qunsetenv("SLIPWAY_ENGINE");
    qunsetenv("SLIPWAY_KNOWN_HOSTS");
}

}  // namespace
}  // namespace slipway::app
