// GUI tests of the monitor (offscreen): every point kept at 1,000,000 points, smoothing over the faint raw
// curve, log scale, x axes, CSV/PNG export of what is shown, log search, cancel, and the alerts a live run
// raises (target reached, finished, stalled), drawn from a RunTracker without a store.
#include "monitor/monitor_widget.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <QFile>
#include <QImage>
#include <QListView>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTextBlock>

#include "monitor/metric_plot.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::append_file;
using testing_util::fixture_log;
using testing_util::wait_until;

int open_and_wait(MonitorWidget& monitor, const QString& path) {
    int loaded = 0;
    auto c = QObject::connect(monitor.tracker(), &RunTracker::loaded, [&](int key) { loaded = key; });
    const Result<int> key = monitor.tracker()->open_log(path);
    EXPECT_TRUE(key.ok()) << key.error();
    EXPECT_TRUE(wait_until([&] { return loaded != 0; }));
    QObject::disconnect(c);
    return loaded;
}

TEST(MonitorWidget, AMillionPointsAreAllKept) {
    FollowService follow;
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    monitor.resize(1200, 800);
    monitor.show();
    RunMetrics m;
    constexpr int kPoints = 1'000'000;
    auto& loss = m.points(Metric::kTrainLoss);
    loss.reserve(kPoints);
    for (int i = 0; i < kPoints; ++i) {
        MetricSample s;
        s.samples = 8.0 * (i + 1);
        s.step = i + 1;
        s.value = 3.0 / std::sqrt(1.0 + i) + 0.1 * std::sin(i * 0.37);  // noisy: min/max per pixel matters
        loss.push_back(s);
    }
    const int key = tracker.show_curves("long", std::move(m));
    monitor.set_smoothing(0.9);
    const QCPGraph* raw = monitor.plot(Metric::kTrainLoss)->raw_graph(key);
    const QCPGraph* smooth = monitor.plot(Metric::kTrainLoss)->smoothed_graph(key);
    EXPECT_EQ(raw->dataCount(), kPoints);
    EXPECT_EQ(smooth->dataCount(), kPoints);
    EXPECT_TRUE(raw->adaptiveSampling());
    // The last point is the real last point, not a sample of it.
    EXPECT_EQ(raw->data()->at(kPoints - 1)->key, 8.0 * kPoints);
    monitor.plot(Metric::kTrainLoss)->replot(QCustomPlot::rpImmediateRefresh);
    EXPECT_GT(monitor.plot(Metric::kTrainLoss)->replotTime(), 0.0);
}

TEST(MonitorWidget, SmoothingLogScaleAndXAxes) {
    FollowService follow;
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    const int key = open_and_wait(monitor, fixture_log("juniper-h100n1-result_0.txt"));
    MetricPlot* loss = monitor.plot(Metric::kTrainLoss);
    monitor.set_smoothing(0.0);
    EXPECT_FALSE(loss->smoothed_graph(key)->visible());
    EXPECT_EQ(loss->raw_graph(key)->pen().color().alpha(), 255);
    monitor.set_smoothing(0.8);
    EXPECT_TRUE(loss->smoothed_graph(key)->visible());
    EXPECT_LT(loss->raw_graph(key)->pen().color().alpha(), 255);  // raw stays, faint, behind
    EXPECT_EQ(loss->raw_graph(key)->dataCount(), 46);
    EXPECT_EQ(loss->smoothed_graph(key)->dataCount(), 46);
    EXPECT_NE(loss->smoothed_graph(key)->data()->at(10)->value, loss->raw_graph(key)->data()->at(10)->value);
    EXPECT_EQ(monitor.plot(Metric::kEvalAccuracy)->smoothing(), 0.0);  // evaluations are never averaged

    monitor.set_log_scale(true);
    EXPECT_EQ(loss->yAxis->scaleType(), QCPAxis::stLogarithmic);
    monitor.set_log_scale(false);
    EXPECT_EQ(loss->yAxis->scaleType(), QCPAxis::stLinear);

    // juniper logs global_batch_size 8 and no step_num: steps = samples / 8; wall time from run_start.
    monitor.set_x_axis(XAxis::kSteps);
    EXPECT_EQ(loss->raw_graph(key)->data()->at(0)->key, 10.0);
    EXPECT_EQ(loss->xAxis->label(), "step");
    monitor.set_x_axis(XAxis::kWallTime);
    EXPECT_GT(loss->raw_graph(key)->data()->at(0)->key, 0.0);
    EXPECT_EQ(loss->raw_graph(key)->dataCount(), 46);
}

// A job requeued after a stop (tests/data/requeue: the real log of one): one run, its resume marked on
// every metric plot at the step (or samples) it resumed from, in the run's colour; the status line counts it.
// A cross-node run's log (real, tests/data/requeue): the status line names its nodes and their ranks.
TEST(MonitorWidget, ACrossNodeRunShowsItsNodes) {
    FollowService follow;
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    open_and_wait(monitor, QString::fromUtf8(test_paths::test_data_dir("/requeue/slurm-node-lost.out")));
    EXPECT_TRUE(monitor.status_text().contains(QStringLiteral("nodes: node1 (ranks 0-1), node2 (ranks 2-3)")))
        << monitor.status_text().toStdString();
    EXPECT_FALSE(monitor.status_text().contains(QStringLiteral("lost:"))) << "the resumed run completed";
}

// A cross-node run still training: the status line says each node's last heartbeat step, and which is behind.
TEST(MonitorWidget, ACrossNodeRunInTrainingShowsWhichNodeIsBehind) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("slurm-7.out"));
    QFile log(path);
    ASSERT_TRUE(log.open(QIODevice::WriteOnly));
    log.write(
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", \"key\": "
        "\"node_ranks\", \"value\": {\"node1\": [0, 1], \"node2\": [2, 3]}, \"metadata\": {}}\n");
    log.write(testing_util::mllog_line("train_loss", 2.5, 52, 416).c_str());
    log.write(
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 2, \"event_type\": \"POINT_IN_TIME\", \"key\": "
        "\"node_steps\", \"value\": {\"node1\": 52, \"node2\": 49}, \"metadata\": {\"step_num\": 52}}\n");
    log.close();
    FollowService follow;
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    open_and_wait(monitor, path);
    EXPECT_TRUE(
        monitor.status_text().contains(QStringLiteral("heartbeats: node1 step 52, node2 step 49 (3 behind)")))
        << monitor.status_text().toStdString();
}

TEST(MonitorWidget, ARequeuedRunIsOneCurveWithItsResumeMarked) {
    FollowService follow;
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    const int key =
        open_and_wait(monitor, QString::fromUtf8(test_paths::test_data_dir("/requeue/slurm-requeued.out")));
    const TrackedRun* run = tracker.run(key);
    ASSERT_NE(run, nullptr);
    ASSERT_EQ(run->metrics.resumes.size(), 1u);
    const double step = run->metrics.resumes[0].step;
    monitor.set_x_axis(XAxis::kSteps);
    for (Metric m : {Metric::kTrainLoss, Metric::kLearningRate}) {
        const QList<QCPItemStraightLine*> marks = monitor.plot(m)->run_marks(key);
        ASSERT_EQ(marks.size(), 1) << metric_key(m);
        EXPECT_EQ(marks[0]->point1->coords().x(), step);
        EXPECT_EQ(marks[0]->point2->coords().x(), step);  // vertical
        EXPECT_EQ(marks[0]->pen().color().rgb(), monitor.plot(m)->raw_graph(key)->pen().color().rgb());
    }
    monitor.set_x_axis(XAxis::kSamples);
    EXPECT_EQ(monitor.plot(Metric::kTrainLoss)->run_marks(key)[0]->point1->coords().x(),
              step * *run->metrics.global_batch_size);
    EXPECT_TRUE(monitor.status_text().contains(QStringLiteral("restarts: 1")))
        << monitor.status_text().toStdString();
    EXPECT_TRUE(monitor.status_text().contains(QStringLiteral("run_stop: success")))
        << monitor.status_text().toStdString();
}

TEST(MonitorWidget, ExportsWhatIsShown) {
    FollowService follow;
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    monitor.resize(1000, 700);
    monitor.show();
    open_and_wait(monitor, fixture_log("juniper-h100n1-result_0.txt"));
    open_and_wait(monitor, fixture_log("dell-xe9680-result_0.txt"));
    monitor.set_smoothing(0.5);
    QTemporaryDir dir;
    ASSERT_TRUE(monitor.export_csv(dir.filePath("shown.csv")).ok());
    QFile csv(dir.filePath("shown.csv"));
    ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    ASSERT_EQ(lines.size(), 1 + 46 + 7 + 5);
    EXPECT_EQ(lines[0], "run,metric,x_name,x,value,smoothed");
    // Runs in the order they were opened, metrics in the plots' order.
    EXPECT_EQ(lines[1], "juniper-h100n1-result_0.txt,train_loss,samples,80,3.7142,3.7142");
    const QString dell_eval = lines[1 + 46 + 7];
    EXPECT_TRUE(dell_eval.startsWith("dell-xe9680-result_0.txt,eval_accuracy,samples,"))
        << dell_eval.toStdString();
    EXPECT_TRUE(dell_eval.endsWith(",")) << dell_eval.toStdString();  // evaluations are not smoothed

    ASSERT_TRUE(monitor.export_png(dir.filePath("shown.png")).ok());
    const QImage png(dir.filePath("shown.png"));
    EXPECT_GT(png.width(), 400);
    EXPECT_GT(png.height(), 300);
    EXPECT_FALSE(monitor.export_png(dir.filePath("no/such/dir/x.png")).ok());
}

// The run list is a view of the tracked rows of the monitor's RunsModel: each run a checkable row in the
// order opened, with its curve's colour; unchecking a row (as a click does, through the model) hides its
// curves, selecting one makes it current, removing the current run makes its neighbour current.
TEST(MonitorWidget, TheRunListIsAViewOfWhichRunsAreShown) {
    FollowService follow;
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    const int juniper = open_and_wait(monitor, fixture_log("juniper-h100n1-result_0.txt"));
    const int dell = open_and_wait(monitor, fixture_log("dell-xe9680-result_0.txt"));
    auto* list = monitor.findChild<QListView*>();
    ASSERT_NE(list, nullptr);
    QAbstractItemModel* model = list->model();
    ASSERT_EQ(model->rowCount(), 2);
    EXPECT_EQ(model->index(0, 0).data().toString(), "juniper-h100n1-result_0.txt");
    EXPECT_EQ(model->index(1, 0).data(Qt::DecorationRole).value<QColor>(), monitor.view(dell)->color);
    EXPECT_EQ(model->index(0, 0).data(Qt::CheckStateRole).toInt(), Qt::Checked);
    EXPECT_TRUE(
        model->index(0, 0).data(Qt::ToolTipRole).toString().startsWith("juniper-h100n1-result_0.txt: "));
    EXPECT_EQ(monitor.current_run(), dell);  // the run opened last

    MetricPlot* loss = monitor.plot(Metric::kTrainLoss);
    ASSERT_TRUE(model->setData(model->index(0, 0), Qt::Unchecked, Qt::CheckStateRole));
    EXPECT_FALSE(loss->raw_graph(juniper)->visible());
    EXPECT_TRUE(loss->raw_graph(dell)->visible());
    monitor.set_run_visible(juniper, true);
    EXPECT_EQ(model->index(0, 0).data(Qt::CheckStateRole).toInt(), Qt::Checked);
    EXPECT_TRUE(loss->raw_graph(juniper)->visible());

    list->setCurrentIndex(model->index(0, 0));
    EXPECT_EQ(monitor.current_run(), juniper);
    monitor.remove_run(juniper);
    ASSERT_EQ(model->rowCount(), 1);
    EXPECT_EQ(monitor.current_run(), dell);
}

// A log with eval_task lines (as the engine writes them with /eval/tasks): one curve per task and metric on
// the task plot beside the loss, which is hidden for logs without them and when its run is unchecked.
TEST(MonitorWidget, EvalTaskLinesArePlottedAsOneSeriesPerTaskAndMetric) {
    FollowService follow(50);
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    monitor.resize(1200, 700);
    monitor.show();
    QTemporaryDir dir;
    const QString log = dir.filePath("tasks.txt");
    std::string text;
    auto task_line = [](const std::string& task, const std::string& metric, double value, int step) {
        return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(1000 + step) +
               ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"eval_task\", \"value\": " +
               std::to_string(value) +
               ", \"metadata\": {\"file\": \"engine/train/task_eval.cpp\", \"lineno\": 44, " +
               "\"samples_count\": " + std::to_string(step * 4) + ", \"step_num\": " + std::to_string(step) +
               ", \"task\": \"" + task + "\", \"metric\": \"" + metric + "\"}}\n";
    };
    for (int step = 1; step <= 12; ++step)
        text += testing_util::mllog_line("train_loss", 8.0 - 0.1 * step, step, step * 4, 1000 + step);
    for (int step : {6, 12}) {
        text += task_line("mc", "acc", step / 24.0, step);
        text += task_line("mc", "acc_norm", 0.5, step);
        text += task_line("copy", "exact_match", step == 6 ? 0.0 : 1.0, step);
        text += task_line("wiki", "perplexity", 400.0 - step, step);
    }
    append_file(log, text);
    const int key = tracker.follow_log(log, "tasks.txt");  // followed: later lines arrive live
    ASSERT_TRUE(wait_until([&] {
        const QCPGraph* g = monitor.task_graph(key, "copy/exact_match");
        return g != nullptr && g->dataCount() == 2;
    }));
    // Scores and perplexity each on their own plot: a perplexity of ~400 does not flatten the accuracies,
    // and the score axis shows the whole [0, 1] scale.
    MetricPlot* tasks = monitor.task_plot(TaskFamily::kScore);
    MetricPlot* perplexity = monitor.task_plot(TaskFamily::kPerplexity);
    EXPECT_TRUE(tasks->isVisibleTo(&monitor));
    EXPECT_TRUE(perplexity->isVisibleTo(&monitor));
    ASSERT_NE(monitor.task_graph(key, "wiki/perplexity"), nullptr);
    EXPECT_EQ(perplexity->graphCount(), 2);
    EXPECT_EQ(monitor.task_graph(key, "wiki/perplexity")->parentPlot(), perplexity);
    EXPECT_EQ(perplexity->yAxis->scaleType(), QCPAxis::stLogarithmic);
    monitor.grab();  // lays the plots out
    EXPECT_GE(tasks->yAxis->range().lower, -0.1);
    EXPECT_LE(tasks->yAxis->range().lower, 0.0);
    EXPECT_GE(tasks->yAxis->range().upper, 1.0);
    EXPECT_LE(tasks->yAxis->range().upper, 1.1);
    // The legend sits under the plot, off the data.
    EXPECT_TRUE(tasks->legend->visible());
    EXPECT_GE(tasks->legend->outerRect().top(), tasks->axisRect()->outerRect().bottom());
    EXPECT_EQ(tasks->axisRect()->insetLayout()->elementCount(), 0);
    EXPECT_EQ(monitor.plot(Metric::kTrainLoss)->raw_graph(key)->dataCount(), 12);
    for (const char* series : {"mc/acc", "mc/acc_norm", "copy/exact_match"}) {
        const QCPGraph* graph = monitor.task_graph(key, series);
        ASSERT_NE(graph, nullptr) << series;
        EXPECT_EQ(graph->name(), QString::fromUtf8(series));
        EXPECT_EQ(graph->dataCount(), 2) << series;
        EXPECT_EQ(graph->data()->at(0)->key, 24.0) << series;  // samples_count of step 6
    }
    EXPECT_EQ(monitor.task_graph(key, "mc/acc")->data()->at(1)->value, 0.5);
    EXPECT_EQ(monitor.task_graph(key, "copy/exact_match")->data()->at(1)->value, 1.0);
    EXPECT_EQ(monitor.task_graph(key, "mc/exact_match"), nullptr);
    EXPECT_EQ(tasks->graphCount(), 6);  // a raw and a smoothed graph per series

    // Live: a later evaluation adds a point to each curve.
    append_file(log, task_line("mc", "acc", 0.75, 18));
    EXPECT_TRUE(wait_until([&] { return monitor.task_graph(key, "mc/acc")->dataCount() == 3; }));

    QTemporaryDir csv_dir;
    ASSERT_TRUE(monitor.export_csv(csv_dir.filePath("shown.csv")).ok());
    QFile csv(csv_dir.filePath("shown.csv"));
    ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
    const QString rows = QString::fromUtf8(csv.readAll());
    EXPECT_TRUE(rows.contains("\ntasks.txt,eval_task:mc/acc,samples,72,0.75,\n")) << rows.toStdString();
    EXPECT_EQ(rows.count(",eval_task:"), 9);  // 3 + 2 + 2 + 2 points

    monitor.set_run_visible(key, false);
    EXPECT_FALSE(tasks->isVisibleTo(&monitor));
    EXPECT_FALSE(perplexity->isVisibleTo(&monitor));
    monitor.set_run_visible(key, true);
    EXPECT_TRUE(tasks->isVisibleTo(&monitor));

    // A second log without eval_task lines adds no curve; with two runs the legend names the run.
    const int other = open_and_wait(monitor, fixture_log("juniper-h100n1-result_0.txt"));
    EXPECT_EQ(monitor.task_graph(other, "mc/acc"), nullptr);
    monitor.set_x_axis(XAxis::kSteps);
    EXPECT_EQ(monitor.task_graph(key, "mc/acc")->name(), QStringLiteral("tasks.txt: mc/acc"));
    EXPECT_EQ(monitor.task_graph(key, "mc/acc")->data()->at(0)->key, 6.0);
    monitor.remove_run(key);
    EXPECT_FALSE(tasks->isVisibleTo(&monitor));
    EXPECT_FALSE(perplexity->isVisibleTo(&monitor));
    EXPECT_EQ(tasks->graphCount(), 0);
    EXPECT_EQ(perplexity->graphCount(), 0);
}

TEST(MetricPlot, RepeatedFitsOfAFlatCurveKeepTheAxisOnTheData) {
    // A flat curve (acc_norm 0.5 at every evaluation) fitted at every batch: the axis stays around the data
    // (before, each fit padded the previous range again, and it grew without end).
    MetricPlot plot(QStringLiteral("flat"));
    plot.set_run(1, QStringLiteral("run"), Qt::blue, {24, 48, 72}, {0.5, 0.5, 0.5});
    for (int i = 0; i < 50; ++i)
        plot.fit();
    EXPECT_NEAR(plot.yAxis->range().center(), 0.5, 1e-9);
    EXPECT_LT(plot.yAxis->range().size(), 0.1);
    EXPECT_DOUBLE_EQ(plot.xAxis->range().lower, 24);
    EXPECT_DOUBLE_EQ(plot.xAxis->range().upper, 72);
    // With a span to show (scores against [0, 1]) the axis is that span and a 5% margin, fit after fit.
    plot.set_y_span(0.0, 1.0);
    for (int i = 0; i < 50; ++i)
        plot.fit();
    EXPECT_NEAR(plot.yAxis->range().lower, -0.05, 1e-9);
    EXPECT_NEAR(plot.yAxis->range().upper, 1.05, 1e-9);
}

TEST(MonitorWidget, SearchFindsLinesOlderThanTheShownWindow) {
    QTemporaryDir dir;
    const QString path = dir.filePath("slurm-9.out");
    std::string log = "0: Needle in the first lines\n";
    for (int i = 1; i < MonitorWidget::kMaxLogLines + 5000; ++i)
        log += "0: line " + std::to_string(i) + "\n";
    append_file(path, log);
    FollowService follow;
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    open_and_wait(monitor, path);
    ASSERT_FALSE(monitor.log_view()->toPlainText().contains("Needle"));  // only the last lines are kept
    EXPECT_TRUE(monitor.find_in_log("line 24990", true));  // a shown line: found at once, no file read
    EXPECT_FALSE(monitor.log_search_pending());
    int finished = 0;
    QObject::connect(&monitor, &MonitorWidget::log_search_finished,
                     [&](bool found) { finished = found ? 1 : -1; });
    EXPECT_FALSE(monitor.find_in_log("needle in THE"));  // not shown: the file is searched off the GUI thread
    EXPECT_TRUE(monitor.log_search_pending());
    ASSERT_TRUE(wait_until([&] { return finished != 0; }));
    EXPECT_EQ(finished, 1);
    EXPECT_EQ(monitor.log_view()->textCursor().selectedText(), "Needle in the");
    EXPECT_TRUE(monitor.log_view()->textCursor().block().text().startsWith("0: Needle"));
    EXPECT_LT(monitor.log_view()->document()->blockCount(), MonitorWidget::kMaxLogLines);
    // A text that is nowhere in the file is reported as not found.
    finished = 0;
    EXPECT_FALSE(monitor.find_in_log("no such text"));
    ASSERT_TRUE(wait_until([&] { return finished != 0; }));
    EXPECT_EQ(finished, -1);
}

TEST(MonitorWidget, SearchTheRawLogAndCancelOnlyWhatCanBeCancelled) {
    FollowService follow;
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    const int key = open_and_wait(monitor, fixture_log("juniper-h100n1-result_0.txt"));
    EXPECT_TRUE(monitor.find_in_log("submission_org"));
    EXPECT_TRUE(monitor.log_view()->textCursor().selectedText() == "submission_org");
    EXPECT_FALSE(monitor.find_in_log("text that is not in the log"));
    int cancelled = 0;
    QObject::connect(&monitor, &MonitorWidget::cancel_requested, [&](int k) { cancelled = k; });
    QPushButton* button = nullptr;
    for (QPushButton* b : monitor.findChildren<QPushButton*>()) {
        if (b->text() == "Cancel run") button = b;
    }
    ASSERT_NE(button, nullptr);
    EXPECT_FALSE(button->isEnabled());
    (void)key;
    // Only a run with a process or a job can be cancelled: a log file cannot, a running engine can.
    const int followed = tracker.follow_log(fixture_log("juniper-h100n1-result_0.txt"), "followed");
    EXPECT_FALSE(button->isEnabled());
    EXPECT_EQ(monitor.current_run(), followed);
    QTemporaryDir runs;
    RunTracker::Options options;
    options.local_runs_dir = runs.path();
    options.engine_binary = testing_util::fake_engine();
    RunTracker local(nullptr, &follow, nullptr, options);
    MonitorWidget local_monitor(&local);
    QObject::connect(&local_monitor, &MonitorWidget::cancel_requested, [&](int k) { cancelled = k; });
    qputenv("FAKE_ENGINE_MODE", "hang");
    const Result<int> live = local.submit_local(testing_util::demo_config());
    qunsetenv("FAKE_ENGINE_MODE");
    ASSERT_TRUE(live.ok()) << live.error();
    QPushButton* local_button = nullptr;
    for (QPushButton* b : local_monitor.findChildren<QPushButton*>()) {
        if (b->text() == "Cancel run") local_button = b;
    }
    ASSERT_TRUE(wait_until([&] { return local_button->isEnabled(); }));  // once the engine has started
    local_button->click();
    EXPECT_EQ(cancelled, *live);
    ASSERT_TRUE(local.cancel(*live).ok());
    ASSERT_TRUE(wait_until([&] { return local.run(*live)->state == RunState::kCancelled; }));
    EXPECT_FALSE(local_button->isEnabled());
    monitor.set_current_run(key);
    EXPECT_FALSE(button->isEnabled());
}

TEST(MonitorWidget, ALiveRunAlertsOnTargetAndFinish) {
    QTemporaryDir dir;
    const QString log = dir.filePath("mllog.txt");
    FollowService follow(50);
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    std::vector<RunAlert> alerts;
    QObject::connect(&tracker, &RunTracker::alert, [&](int, const RunAlert& a) { alerts.push_back(a); });
    const int key = tracker.follow_log(log, "live");
    tracker.set_target(key, 2.5, false);
    append_file(log, testing_util::mllog_line("eval_accuracy", 2.7, 10, 80));
    ASSERT_TRUE(
        wait_until([&] { return monitor.run(key)->metrics.points(Metric::kEvalAccuracy).size() == 1; }));
    EXPECT_TRUE(alerts.empty());
    append_file(log, testing_util::mllog_line("eval_accuracy", 2.4, 20, 160));
    append_file(log,
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": 5, \"event_type\": \"INTERVAL_END\", \"key\": "
                "\"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}\n");
    ASSERT_TRUE(wait_until([&] { return alerts.size() == 2; }));
    EXPECT_EQ(alerts[0].kind, RunAlertKind::kTargetReached);
    EXPECT_EQ(alerts[1].kind, RunAlertKind::kFinished);
    EXPECT_TRUE(monitor.status_text().contains("run_stop: success"));
    EXPECT_EQ(*monitor.plot(Metric::kEvalAccuracy)->target(), 2.5);
}

TEST(MonitorWidget, ALiveRunWithoutNewStepsRaisesAStallAlertOnce) {
    QTemporaryDir dir;
    const QString log = dir.filePath("mllog.txt");
    FollowService follow(20);
    RunTracker tracker(nullptr, &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    tracker.set_stall_policy(3.0, 300, 50);  // 3 x median step interval, at least 0.3 s
    std::vector<RunAlert> alerts;
    QObject::connect(&tracker, &RunTracker::alert, [&](int, const RunAlert& a) { alerts.push_back(a); });
    const int key = tracker.follow_log(log, "hanging");
    for (int step = 1; step <= 4; ++step) {
        append_file(log, testing_util::mllog_line("train_loss", 3.0 - 0.1 * step, step, step * 8));
        ASSERT_TRUE(wait_until(
            [&] { return monitor.run(key)->metrics.points(Metric::kTrainLoss).size() == size_t(step); }));
        testing_util::wait_until([] { return false; }, 100);  // steps ~0.1 s apart
    }
    EXPECT_TRUE(alerts.empty());
    ASSERT_TRUE(wait_until([&] { return !alerts.empty(); }, 5000));
    EXPECT_EQ(alerts[0].kind, RunAlertKind::kStalled);
    EXPECT_NE(alerts[0].message.find("no new step"), std::string::npos);
    EXPECT_EQ(tracker.run(key)->state, RunState::kStalled);
    EXPECT_TRUE(monitor.status_text().contains("stalled")) << monitor.status_text().toStdString();
    testing_util::wait_until([] { return false; }, 500);
    EXPECT_EQ(alerts.size(), 1u);  // once per stall
    // A new step: running again.
    append_file(log, testing_util::mllog_line("train_loss", 2.5, 5, 40));
    ASSERT_TRUE(wait_until([&] { return tracker.run(key)->state == RunState::kRunning; }));
}

}  // namespace
}  // namespace slipway::app
