// Tests of RunMetrics, smoothing, CSV export and RunWatch: the three real MLPerf logs fold into the curves
// with the hand-checked point counts of tests/contract/log_summary_test.cpp, and the alert rules.
#include "core/run_metrics.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include <QFile>
#include <QTemporaryDir>

#include "contract/mllog_stream.h"
#include "core/run_watch.h"
#include "history/run_history.h"
#include "monitor/series_csv.h"
#include "monitor/smoothing.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::fixture_log;

RunMetrics metrics_of(const QString& path) {
    RunMetrics m;
    for (const MllogStreamItem& item : testing_util::read_log(path)) {
        if (item.kind == MllogLineKind::kEvent) m.add(item.event);
    }
    return m;
}

TEST(RunMetrics, RealLogsHaveTheHandCheckedPointCounts) {
    const RunMetrics dell = metrics_of(fixture_log("dell-xe9680-result_0.txt"));
    EXPECT_EQ(dell.points(Metric::kEvalAccuracy).size(), 5u);
    EXPECT_EQ(dell.points(Metric::kTrainLoss).size(), 0u);
    const RunMetrics fujitsu = metrics_of(fixture_log("fujitsu-gx2560m7-result_0.txt"));
    EXPECT_EQ(fujitsu.points(Metric::kEvalAccuracy).size(), 5u);
    const RunMetrics juniper = metrics_of(fixture_log("juniper-h100n1-result_0.txt"));
    ASSERT_EQ(juniper.points(Metric::kTrainLoss).size(), 46u);
    ASSERT_EQ(juniper.points(Metric::kEvalAccuracy).size(), 7u);
    EXPECT_EQ(juniper.points(Metric::kTrainLoss)[0].samples, 80.0);
    EXPECT_EQ(juniper.points(Metric::kTrainLoss)[0].value, 3.7142);
    EXPECT_EQ(juniper.points(Metric::kEvalAccuracy)[6].value, 0.9246053695678711);
    // llama2_70b_lora: MLPerf's target 0.925 (eval loss, lower is better) is known from the log itself.
    EXPECT_EQ(juniper.benchmark, "llama2_70b_lora");
    ASSERT_TRUE(juniper.target.has_value());
    EXPECT_EQ(*juniper.target, 0.925);
    EXPECT_TRUE(juniper.meets_target(0.9246));
    EXPECT_FALSE(juniper.meets_target(0.93));
    EXPECT_EQ(*juniper.status, "success");
    EXPECT_NEAR(static_cast<double>(*juniper.elapsed_ms()) / 60000.0, 115.28, 0.5);
    EXPECT_EQ(juniper.eval_meaning, EvalMeaning::kLoss);  // MLPerf's rules for llama2_70b_lora
    EXPECT_STREQ(eval_title(juniper.eval_meaning), "eval loss (MLPerf eval_accuracy)");
}

// The engine logs eval_loss and eval_token_accuracy before eval_accuracy: the equal value names it.
TEST(RunMetrics, TheEnginesEvalAccuracyIsNamedByTheMeasureItEquals) {
    auto event = [](const char* key, double value) {
        MllogEvent e;
        e.key = key;
        e.value = value;
        e.metadata = {{"samples_count", 80}, {"step_num", 10}};
        return e;
    };
    RunMetrics token;
    for (const MllogEvent& e :
         {event("eval_loss", 5.5), event("eval_token_accuracy", 0.125), event("eval_accuracy", 0.125)})
        token.add(e);
    EXPECT_EQ(token.eval_meaning, EvalMeaning::kTokenAccuracy);
    EXPECT_EQ(token.points(Metric::kEvalAccuracy).size(), 1u);  // the two measures are not plotted twice
    RunMetrics loss;
    for (const MllogEvent& e :
         {event("eval_loss", 5.5), event("eval_token_accuracy", 0.125), event("eval_accuracy", 5.5)})
        loss.add(e);
    EXPECT_EQ(loss.eval_meaning, EvalMeaning::kLoss);
    RunMetrics unknown;  // another trainer's log: nothing to compare with
    unknown.add(event("eval_accuracy", 0.7));
    EXPECT_EQ(unknown.eval_meaning, EvalMeaning::kUnknown);
    EXPECT_STREQ(eval_title(unknown.eval_meaning), "eval_accuracy");
}

// eval_task lines (the engine's /eval/tasks) become one series per task and metric, in the order the log
// names them; lines without a task or metric name or a numeric value are not points.
TEST(RunMetrics, EvalTaskLinesAreOneSeriesPerTaskAndMetric) {
    auto task_line = [](const char* task, const char* metric, MllogJson value, int step) {
        MllogEvent e;
        e.key = "eval_task";
        e.value = std::move(value);
        e.metadata = {{"samples_count", step * 8}, {"step_num", step}};
        if (task != nullptr) e.metadata["task"] = task;
        if (metric != nullptr) e.metadata["metric"] = metric;
        return e;
    };
    RunMetrics m;
    for (int step : {10, 20}) {
        EXPECT_EQ(m.add(task_line("copy", "exact_match", step / 20.0, step)), std::nullopt);
        m.add(task_line("mc", "acc", 0.25 * step / 10, step));
        m.add(task_line("mc", "acc_norm", 0.5, step));
    }
    m.add(task_line("mc", nullptr, 1.0, 30));
    m.add(task_line(nullptr, "acc", 1.0, 30));
    m.add(task_line("mc", "acc", "high", 30));
    ASSERT_EQ(m.task_series.size(), 3u);
    EXPECT_EQ(m.task_series[0].name, "copy/exact_match");
    EXPECT_EQ(m.task_series[1].name, "mc/acc");
    EXPECT_EQ(m.task_series[2].name, "mc/acc_norm");
    ASSERT_EQ(m.task_series[1].points.size(), 2u);
    EXPECT_EQ(m.task_series[1].points[1].value, 0.5);
    EXPECT_EQ(m.task_series[1].points[1].step, 20);
    EXPECT_EQ(m.task_series[1].points[1].samples, 160);
    EXPECT_EQ(m.total_points(), 0u);  // not one of the four metrics
}

TEST(RunMetrics, XAxesFallBackWhereTheLogIsSilent) {
    RunMetrics m;
    MllogEvent start;
    start.key = "run_start";
    start.time_ms = 10'000;
    m.add(start);
    MllogEvent gbs;
    gbs.key = "global_batch_size";
    gbs.value = 8;
    m.add(gbs);
    MllogEvent loss;
    loss.key = "train_loss";
    loss.time_ms = 12'500;
    loss.value = 2.0;
    loss.metadata = {{"samples_count", 80}};
    ASSERT_EQ(m.add(loss), Metric::kTrainLoss);
    const MetricSample& p = m.points(Metric::kTrainLoss)[0];
    EXPECT_EQ(m.x_of(p, XAxis::kSamples), 80.0);
    EXPECT_EQ(m.x_of(p, XAxis::kSteps), 10.0);  // 80 samples / 8 per step
    EXPECT_EQ(m.x_of(p, XAxis::kWallTime), 2.5);
    MllogEvent text_value = loss;
    text_value.value = "nan";
    EXPECT_FALSE(m.add(text_value).has_value());
}

TEST(RunMetrics, EtaFromStepsDone) {
    RunMetrics m;
    MllogEvent total;
    total.key = "opt_learning_rate_training_steps";
    total.value = 100;
    m.add(total);
    MllogEvent start;
    start.key = "run_start";
    start.time_ms = 1000;
    m.add(start);
    MllogEvent loss;
    loss.key = "train_loss";
    loss.value = 1.0;
    loss.time_ms = 11'000;
    loss.metadata = {{"step_num", 25}};
    m.add(loss);
    EXPECT_EQ(*m.progress(), 0.25);
    EXPECT_EQ(*m.elapsed_ms(), 10'000);
    EXPECT_EQ(*m.eta_ms(), 30'000);
}

TEST(Smoothing, DebiasedEmaAndPassThrough) {
    const std::vector<double> v = {1.0, 1.0, 1.0};
    EXPECT_EQ(ema_smooth(v, 0.9), v);  // debiased: a constant stays itself from the first point
    EXPECT_EQ(ema_smooth({1.0, 3.0}, 0.0), (std::vector<double>{1.0, 3.0}));
    const std::vector<double> s = ema_smooth({0.0, 10.0}, 0.5);
    EXPECT_DOUBLE_EQ(s[1], (0.5 * 0.0 * 0.5 + 0.5 * 10.0) / (1 - 0.25));  // (2.5 + ... ) debiased
    const std::vector<double> with_nan = ema_smooth({1.0, std::nan(""), 3.0}, 0.5);
    EXPECT_TRUE(std::isnan(with_nan[1]));
    EXPECT_GT(with_nan[2], 1.0);
    EXPECT_LT(with_nan[2], 3.0);
}

TEST(SeriesCsv, RowsPerPointQuotedNamesShortNumbers) {
    std::ostringstream out;
    write_series_csv(out, {{"run, \"a\"", "train_loss", "samples", {8, 16}, {0.1, 2.5}, {0.1, 1.9}},
                           {"b", "lr", "step", {1}, {1e-5}, {}}});
    EXPECT_EQ(out.str(),
              "run,metric,x_name,x,value,smoothed\n"
              "\"run, \"\"a\"\"\",train_loss,samples,8,0.1,0.1\n"
              "\"run, \"\"a\"\"\",train_loss,samples,16,2.5,1.9\n"
              "b,lr,step,1,1e-05,\n");
}

MllogEvent step_event(const char* key, double value, double step) {
    MllogEvent e;
    e.key = key;
    e.value = value;
    e.metadata = {{"step_num", step}, {"samples_count", step * 8}};
    return e;
}

TEST(RunWatch, StallAfterFiveMedianIntervalsOnceUntilStepsResume) {
    RunWatch watch(5.0, 1000);
    RunMetrics m;
    int64_t now = 0;
    for (int step = 1; step <= 5; ++step) {
        now += step == 3 ? 4000 : 2000;  // median interval 2 s despite one slow step
        const MllogEvent e = step_event("train_loss", 2.0, step);
        m.add(e);
        EXPECT_TRUE(watch.on_event(e, m, now).empty());
    }
    EXPECT_EQ(*watch.median_step_interval_ms(), 2000);
    EXPECT_FALSE(watch.check_stall(now + 9'999).has_value());
    const std::optional<RunAlert> stall = watch.check_stall(now + 10'000);
    ASSERT_TRUE(stall.has_value());
    EXPECT_EQ(stall->kind, RunAlertKind::kStalled);
    EXPECT_FALSE(watch.check_stall(now + 20'000).has_value());  // reported once
    const MllogEvent next = step_event("train_loss", 1.9, 6);
    m.add(next);
    watch.on_event(next, m, now + 21'000);
    EXPECT_TRUE(watch.check_stall(now + 32'000).has_value());  // re-armed by the new step
}

// A job requeued after its time limit, as one Slurm log (--open-mode=append) holds it: tests/data/requeue/
// slurm-requeued.out is the real output of the e2e cluster test's requeued run (the demo, stopped by
// `scontrol requeue` after checkpoint-4 and resumed from it). One run: the stopped segment's run_stop no
// longer counts once the engine logs where it resumed, the steps go on, the resume is marked.
// Real: node2's ranks killed on the local multi-node Slurm, the job requeued. The node list comes from the
// engine's node_ranks; the failed segment's run_stop names node2 as lost, and the resume clears it.
TEST(RunMetrics, ANodeLostMidRunIsNamedUntilTheJobResumes) {
    const QString path = QString::fromUtf8(test_paths::test_data_dir("/requeue/slurm-node-lost.out"));
    const RunMetrics m = metrics_of(path);
    ASSERT_EQ(m.nodes.size(), 2u);
    EXPECT_EQ(m.nodes[0].node, "node1");
    EXPECT_EQ(m.nodes[0].ranks, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(m.nodes[1].node, "node2");
    EXPECT_EQ(m.nodes[1].ranks, (std::vector<int64_t>{2, 3}));
    EXPECT_TRUE(m.lost_nodes.empty()) << "the resumed run completed";
    EXPECT_EQ(m.status, "success");
    // The log as it stood before the restart: the run failed, having lost node2.
    QFile full(path);
    ASSERT_TRUE(full.open(QIODevice::ReadOnly));
    const QByteArray text = full.readAll();
    QTemporaryDir dir;
    const QString first_segment = dir.filePath(QStringLiteral("first.out"));
    QFile cut(first_segment);
    ASSERT_TRUE(cut.open(QIODevice::WriteOnly));
    cut.write(text.left(text.indexOf("slipway: restart 1 of job")));
    cut.close();
    const RunMetrics failed = metrics_of(first_segment);
    EXPECT_EQ(failed.status, "fail");
    EXPECT_EQ(failed.lost_nodes, std::vector<std::string>{"node2"});
    EXPECT_EQ(failed.nodes.size(), 2u);
}

// While a run on several nodes trains, the engine's node_steps say which node is behind; the last one counts,
// and a value of another shape is not half-read.
TEST(RunMetrics, NodeStepsKeepTheLastHeartbeatOfEachNode) {
    RunMetrics m;
    MllogEvent e;
    e.key = "node_steps";
    e.value = MllogJson::parse(R"({"node1": 40, "node2": 40})");
    m.add(e);
    e.value = MllogJson::parse(R"({"node1": 52, "node2": 49})");
    m.add(e);
    ASSERT_EQ(m.node_steps.size(), 2u);
    EXPECT_EQ(describe_node_steps(m.node_steps), "node1 step 52, node2 step 49 (3 behind)");
    e.value = MllogJson::parse(R"({"node1": "52"})");
    m.add(e);
    EXPECT_EQ(m.node_steps.size(), 2u);
}

TEST(RunMetrics, ARequeuedJobIsOneRunWithItsResumeMarked) {
    const RunMetrics m =
        metrics_of(QString::fromUtf8(test_paths::test_data_dir("/requeue/slurm-requeued.out")));
    ASSERT_EQ(m.resumes.size(), 1u);
    const double resumed_at = m.resumes[0].step;
    EXPECT_GT(resumed_at, 0);
    EXPECT_EQ(m.resumes[0].value, resumed_at);
    EXPECT_EQ(m.x_of(m.resumes[0], XAxis::kSamples), resumed_at * *m.global_batch_size);
    ASSERT_TRUE(m.status.has_value());
    EXPECT_EQ(*m.status, "success");
    EXPECT_EQ(*m.last_step, *m.total_steps);
    // Every step's train_loss, however often the two segments logged it, has one value: the curve goes on.
    std::map<double, double> loss_at;
    for (const MetricSample& p : m.points(Metric::kTrainLoss)) {
        const auto [it, first] = loss_at.emplace(p.step, p.value);
        EXPECT_TRUE(first || it->second == p.value) << "step " << p.step;
    }
    EXPECT_EQ(loss_at.size(), static_cast<size_t>(*m.total_steps));

    // The run store keeps the resumes with the run's facts: a run reopened from the history is marked too.
    QTemporaryDir dir;
    auto history = RunHistory::open(dir.filePath(QStringLiteral("history.sqlite")).toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    StoredRun run;
    run.name = "requeued";
    const int64_t id = *(*history)->add_run(run);
    ASSERT_TRUE((*history)->append(id, {}, m, 1).ok());
    const Result<RunMetrics> loaded = (*history)->load_metrics(id);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    ASSERT_EQ(loaded->resumes.size(), 1u);
    EXPECT_EQ(loaded->resumes[0].step, resumed_at);
    EXPECT_EQ(loaded->resumes[0].samples, m.resumes[0].samples);
    EXPECT_EQ(loaded->resumes[0].time_ms, m.resumes[0].time_ms);
}

TEST(RunWatch, AResumeReopensTheRunItsStoppedSegmentEnded) {
    RunWatch watch;
    RunMetrics m;
    MllogEvent stop;
    stop.key = "run_stop";
    stop.metadata = {{"status", "aborted"}, {"step_num", 5}};
    m.add(stop);
    std::vector<RunAlert> alerts = watch.on_event(stop, m, 1);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].kind, RunAlertKind::kFailed);
    EXPECT_TRUE(watch.ended());
    MllogEvent resume = step_event("resume", 4, 4);
    resume.metadata["restart"] = 1;
    m.add(resume);
    EXPECT_TRUE(watch.on_event(resume, m, 2).empty());
    EXPECT_FALSE(watch.ended());
    EXPECT_FALSE(m.status.has_value()) << "the stopped segment's run_stop no longer counts";
    stop.metadata = {{"status", "success"}, {"step_num", 8}};
    m.add(stop);
    alerts = watch.on_event(stop, m, 3);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].kind, RunAlertKind::kFinished);
}

TEST(RunWatch, TargetThenFinishAndFailures) {
    RunWatch watch;
    RunMetrics m;
    m.target = 0.925;
    MllogEvent eval = step_event("eval_accuracy", 0.93, 10);
    m.add(eval);
    EXPECT_TRUE(watch.on_event(eval, m, 1).empty());
    eval = step_event("eval_accuracy", 0.92, 20);
    m.add(eval);
    std::vector<RunAlert> alerts = watch.on_event(eval, m, 2);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].kind, RunAlertKind::kTargetReached);
    MllogEvent stop;
    stop.key = "run_stop";
    stop.metadata = {{"status", "success"}};
    m.add(stop);
    alerts = watch.on_event(stop, m, 3);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].kind, RunAlertKind::kFinished);
    EXPECT_FALSE(watch.on_exit(0).has_value());  // run_stop already told

    RunWatch crashed;
    const std::optional<RunAlert> failed = crashed.on_exit(134);
    ASSERT_TRUE(failed.has_value());
    EXPECT_EQ(failed->kind, RunAlertKind::kFailed);
    EXPECT_NE(failed->message.find("134"), std::string::npos);
}

}  // namespace
}  // namespace slipway::app
