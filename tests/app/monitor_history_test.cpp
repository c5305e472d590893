// GUI test (offscreen) of the monitor over a history another program has locked: the live run keeps
// being plotted, the user is told once that the history cannot be written and once that it is written
// again, and the history then holds every point once with the offset of the end of the log.
#include <gtest/gtest.h>

#include <QFileInfo>
#include <QTemporaryDir>

#include "history/history_writer.h"
#include "history/run_history.h"
#include "monitor/metric_plot.h"
#include "monitor/monitor_widget.h"
#include "raw_sqlite.h"
#include "runs/runs_table_model.h"
#include "runs_page.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::append_file;
using testing_util::mllog_line;
using testing_util::RawSqlite;
using testing_util::wait_until;

int lines_containing(const MonitorView& run, const QString& text) {
    int n = 0;
    for (const QString& line : run.lines)
        n += line.contains(text) ? 1 : 0;
    return n;
}

TEST(MonitorHistory, KeepsPlottingWhileTheHistoryIsLockedAndCatchesUpAfter) {
    QTemporaryDir dir;
    const QString log = dir.filePath("mllog.txt");
    const QString db = dir.filePath("history.sqlite");
    Result<std::unique_ptr<RunHistory>> history = RunHistory::open(db);
    ASSERT_TRUE(history.ok()) << history.error();
    (*history)->writer().set_retry_policy({.first_delay_ms = 50, .max_delay_ms = 200, .busy_timeout_ms = 50});
    RunRecord record;
    record.name = "live";
    record.log_path = log;
    record.state = RunState::kRunning;
    record.cluster = kLocalProfile;
    const int64_t id = *(*history)->add_run(record);
    FollowService follow(20);
    RunTracker tracker(history->get(), &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    const Result<int> resumed = tracker.resume(id);  // follows the local log on from the stored offset
    ASSERT_TRUE(resumed.ok()) << resumed.error();
    const int key = *resumed;
    auto plotted = [&] { return monitor.plot(Metric::kTrainLoss)->raw_graph(key)->dataCount(); };
    auto stored = [&] { return *(*history)->point_count(id); };
    for (int step = 1; step <= 5; ++step)
        append_file(log, mllog_line("train_loss", 4.0 - 0.01 * step, step, step * 8));
    ASSERT_TRUE(wait_until([&] { return plotted() == 5 && stored() == 5; }));

    RawSqlite other(db);
    ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), QString());
    for (int step = 6; step <= 30; ++step) {
        append_file(log, mllog_line("train_loss", 4.0 - 0.01 * step, step, step * 8));
        if (step % 5 == 0) {
            ASSERT_TRUE(wait_until([&] { return plotted() == step; }));
        }
    }
    EXPECT_EQ(stored(), 5);
    EXPECT_TRUE(monitor.status_text().contains("history not written")) << monitor.status_text().toStdString();
    EXPECT_EQ(lines_containing(*monitor.view(key), "[slipway] history: cannot write the run history " + db),
              1);

    ASSERT_EQ(other.exec("COMMIT"), QString());
    ASSERT_TRUE(wait_until([&] { return stored() == 30; }));
    EXPECT_EQ(plotted(), 30);
    EXPECT_EQ(lines_containing(*monitor.view(key), "written again"), 1);
    EXPECT_EQ(lines_containing(*monitor.view(key), "[slipway] history:"), 2);  // one each way
    EXPECT_FALSE(monitor.status_text().contains("history not written"));
    const Result<RunMetrics> metrics = (*history)->load_metrics(id);
    ASSERT_TRUE(metrics.ok());
    ASSERT_EQ(metrics->points(Metric::kTrainLoss).size(), 30u);
    for (int i = 0; i < 30; ++i)
        EXPECT_EQ(metrics->points(Metric::kTrainLoss)[i].step, i + 1.0);
    EXPECT_EQ((*history)->run(id)->log_offset, static_cast<uint64_t>(QFileInfo(log).size()));
}

// A requeued job, followed into the one store (tests/data/requeue: the real log of one): the Runs page says
// how often it resumed, and the monitor reopened from the history marks the resume again.
TEST(MonitorHistory, ARequeuedRunKeepsItsRestartsInTheStore) {
    QTemporaryDir dir;
    Result<std::unique_ptr<RunHistory>> history =
        RunHistory::open(dir.filePath(QStringLiteral("history.sqlite")));
    ASSERT_TRUE(history.ok()) << history.error();
    FollowService follow;
    RunTracker tracker(history->get(), &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    int loaded = 0;
    QObject::connect(&tracker, &RunTracker::loaded, [&](int key) { loaded = key; });
    ASSERT_TRUE(tracker.open_log(QStringLiteral(SLIPWAY_TEST_DATA_DIR "/requeue/slurm-requeued.out")).ok());
    ASSERT_TRUE(wait_until([&] { return loaded != 0; }));
    ASSERT_TRUE(wait_until([&] {
        const auto runs = (*history)->runs();
        return runs.ok() && runs->size() == 1 && runs->front().restarts == 1;
    }));
    RunsPage page(history->get());
    const RunsTableModel* model = page.model();
    ASSERT_EQ(model->rowCount(), 1);
    const QString state = model->index(0, RunsTableModel::kStateColumn).data().toString();
    EXPECT_TRUE(state.endsWith(QStringLiteral(", restarts: 1"))) << state.toStdString();
    const Result<RunMetrics> stored = (*history)->load_metrics(model->run_id(0));
    ASSERT_TRUE(stored.ok()) << stored.error();
    ASSERT_EQ(stored->resumes.size(), 1u);
}

}  // namespace
}  // namespace slipway::app
