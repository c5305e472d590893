// The window against the two-node test cluster (tests/cluster/start_cluster.sh --nodes 2; label cluster2):
// the demo submitted on 2 nodes x 2 Gloo ranks is followed live in the monitor from its first step (points
// arrive while the job runs, long before its end), the log shows the ranks spread over node1 and node2, and
// the run lands in the history as completed. Skipped when the cluster or the engine is absent.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QFileInfo>
#include <QPlainTextEdit>
#include <QRegularExpression>

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

TEST(TwoNodeRunEndToEnd, CrossNodeDemoIsFollowedLiveFromItsFirstStep) {
    const QString engine = QString::fromUtf8(test_paths::engine_bin());
    if (!QFileInfo(engine).isExecutable()) GTEST_SKIP() << "no slipway-engine at " << engine.toStdString();
    std::map<QString, QString> env = testing_util::use_local_cluster(engine);
    if (env.empty()) GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
    if (env["SLIPWAY_SLURM_NODE_COUNT"].toInt() < 2) GTEST_SKIP() << "the local cluster has one node";
    testing_util::IsolatedHome home;

    MainWindow window(home.path() + "/history.sqlite");
    window.show();
    const remote::ClusterProfile p =
        testing_util::local_cluster_profile(env, env["SLIPWAY_REMOTE_DIR"] + "/gui-two-nodes");
    ASSERT_TRUE(window.clusters_page()->add_profile(p).ok());

    const int steps = 40;
    RunEditor* editor = window.editor();
    ASSERT_TRUE(editor->load_preset("demo-tiny").ok());
    editor->edit("/slurm/nodes", 2);
    editor->edit("/slurm/ntasks_per_node", 2);
    editor->edit("/training/per_device_train_batch_size", 2);
    editor->edit("/training/max_steps", steps);
    editor->edit("/training/warmup_steps", 2);
    editor->edit("/training/logging_steps", 1);
    editor->edit("/training/eval_steps", 20);
    editor->target_box()->setCurrentText("local-slurm");
    ASSERT_TRUE(editor->document().valid()) << format_problems(editor->document().problems());
    QStringList notified;
    QObject::connect(&window, &MainWindow::notified,
                     [&](const QString& title, const QString&) { notified << title; });
    const Result<int> key = window.submit_current();
    ASSERT_TRUE(key.ok()) << key.error();
    const MonitorWidget* monitor = window.monitor();
    // The first time the monitor holds a train_loss point: how many it held and whether the job still ran.
    std::optional<size_t> first_points;
    std::optional<RunState> state_at_first_point;
    // The monitor's status line the first time it showed the nodes' Slurm states (asked with the job's).
    QString node_states_status;
    QObject::connect(window.tracker(), &RunTracker::run_changed, [&](int k) {
        const TrackedRun* r = monitor->run(k);
        if (k == *key && r != nullptr && !r->node_states.empty() && node_states_status.isEmpty())
            node_states_status = monitor->status_text();
        if (k != *key || r == nullptr || first_points) return;
        const size_t n = r->metrics.points(Metric::kTrainLoss).size();
        if (n == 0) return;
        first_points = n;
        state_at_first_point = r->state;
    });
    ASSERT_TRUE(testing_util::wait_until([&] { return !notified.isEmpty(); }, 300'000))
        << "no end of the job";
    const TrackedRun* run = monitor->run(*key);
    ASSERT_TRUE(testing_util::wait_until([&] { return run->state == RunState::kCompleted; }, 60'000))
        << monitor->log_view()->toPlainText().right(3000).toStdString();
    ASSERT_TRUE(first_points.has_value());
    EXPECT_LT(*first_points, static_cast<size_t>(steps) / 2) << "the points came only near the end";
    EXPECT_TRUE(state_at_first_point == RunState::kRunning || state_at_first_point == RunState::kStalled)
        << display_text(*state_at_first_point).toStdString();
    EXPECT_EQ(run->metrics.points(Metric::kTrainLoss).size(), static_cast<size_t>(steps));
    const QString log = monitor->log_view()->toPlainText();
    // Any two of the cluster's nodes (one may still be coming back from another test's stopped slurmd).
    const QRegularExpression spread(
        QStringLiteral("ranks by node: node(\\d) \\(ranks 0-1\\), node(\\d) \\(ranks 2-3\\)"));
    const QRegularExpressionMatch nodes = spread.match(log);
    ASSERT_TRUE(nodes.hasMatch()) << log.toStdString();
    EXPECT_NE(nodes.captured(1), nodes.captured(2));
    EXPECT_TRUE(log.contains("rank 0 of 4: gloo process group via node1:")) << log.toStdString();
    EXPECT_TRUE(
        monitor->status_text().contains(QStringLiteral("nodes: node%1 (ranks 0-1), node%2 (ranks 2-3)")
                                            .arg(nodes.captured(1), nodes.captured(2))))
        << monitor->status_text().toStdString();
    EXPECT_EQ(run->metrics.node_steps.size(), 2u) << "the engine's node_steps (each node's heartbeat step)";
    // While it ran: both nodes with Slurm's word on each (this node's CPUs are all the job's, or not).
    EXPECT_TRUE(
        QRegularExpression(QStringLiteral("node states: node%1 (allocated|mixed).*, node%2 (allocated|mixed)")
                               .arg(nodes.captured(1), nodes.captured(2)))
            .match(node_states_status)
            .hasMatch())
        << node_states_status.toStdString();
    EXPECT_TRUE(run->node_states.empty()) << "node states kept after the end";
    EXPECT_EQ(run->slurm_state, "COMPLETED");
    const auto runs = window.history()->runs();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ(runs->front().state, RunState::kCompleted);
    qunsetenv("SLIPWAY_ENGINE");
    qunsetenv("SLIPWAY_KNOWN_HOSTS");
}

}  // namespace
}  // namespace slipway::app
