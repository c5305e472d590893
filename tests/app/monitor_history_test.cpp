// GUI test (offscreen) of the monitor over a history another program has locked: the live run keeps
// being plotted, the user is told once that the history cannot be written and once that it is written
// again, and the history then holds every point once with the offset of the end of the log.
#include <gtest/gtest.h>

#include <algorithm>

#include <QFileInfo>
#include <QListView>
#include <QTableView>
#include <QTemporaryDir>

#include "core/run_state_display.h"
#include "fake_cluster.h"
#include "history/history_writer.h"
#include "history/run_history.h"
#include "monitor/metric_plot.h"
#include "monitor/monitor_widget.h"
#include "raw_sqlite.h"
#include "runs/cluster_sessions.h"
#include "runs/run_tracker.h"
#include "runs/runs_model.h"
#include "runs_page.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::append_file;
using testing_util::fixture_log;
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
    Result<std::unique_ptr<RunHistory>> history = RunHistory::open(db.toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    (*history)->writer().set_retry_policy({.first_delay_ms = 50, .max_delay_ms = 200, .busy_timeout_ms = 50});
    StoredRun record;
    record.name = "live";
    record.log_path = log.toStdString();
    record.state = RunState::kRunning;
    record.cluster = kLocalCluster;
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
        RunHistory::open(dir.filePath(QStringLiteral("history.sqlite")).toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    FollowService follow;
    RunTracker tracker(history->get(), &follow, nullptr, {});
    MonitorWidget monitor(&tracker);
    int loaded = 0;
    QObject::connect(&tracker, &RunTracker::loaded, [&](int key) { loaded = key; });
    ASSERT_TRUE(
        tracker.open_log(QString::fromUtf8(test_paths::test_data_dir("/requeue/slurm-requeued.out"))).ok());
    ASSERT_TRUE(wait_until([&] { return loaded != 0; }));
    ASSERT_TRUE(wait_until([&] {
        const auto runs = (*history)->runs();
        return runs.ok() && runs->size() == 1 && runs->front().restarts == 1;
    }));
    RunsModel runs(history->get(), &tracker);
    RunsPage page(history->get(), &runs);
    const RunsModel* model = page.model();
    ASSERT_EQ(model->rowCount(), 1);
    const QString state = model->index(0, RunsModel::kStateColumn).data().toString();
    EXPECT_TRUE(state.endsWith(QStringLiteral(", restarts: 1"))) << state.toStdString();
    const Result<RunMetrics> stored = (*history)->load_metrics(model->run_id(0));
    ASSERT_TRUE(stored.ok()) << stored.error();
    ASSERT_EQ(stored->resumes.size(), 1u);
}

// The Runs page and the monitor's run list are two views of one RunsModel: a stored run shown in the monitor
// is one row of both (with its curves' colour on the Runs page too); a followed log with no stored row is the
// monitor's only; a run's state reaches both through the model as the tracker learns it, with no reload of
// the store; removing a run from the monitor leaves its stored row, and the Runs page's selection on it.
TEST(SharedRunsModel, BothViewsShowOneRowPerRunAndHearItsChangesThroughTheModel) {
    QTemporaryDir dir;
    Result<std::unique_ptr<RunHistory>> history =
        RunHistory::open(dir.filePath(QStringLiteral("h.sqlite")).toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    FollowService follow(50);
    RunTracker tracker(history->get(), &follow, nullptr, {});
    RunsModel runs(history->get(), &tracker);
    RunsPage page(history->get(), &runs);
    MonitorWidget monitor(&tracker, &runs);
    QObject::connect(&tracker, &RunTracker::store_changed, &page, &RunsPage::reload);  // as the window does
    QAbstractItemModel* list = monitor.findChild<QListView*>()->model();
    QAbstractItemModel* table = page.table()->model();

    int loaded = 0;
    QObject::connect(&tracker, &RunTracker::loaded, [&](int key) { loaded = key; });
    ASSERT_TRUE(tracker.open_log(fixture_log("juniper-h100n1-result_0.txt")).ok());
    ASSERT_TRUE(wait_until([&] { return loaded != 0; }));
    const int stored_key = loaded;
    const int64_t stored_id = tracker.run(stored_key)->store_id;
    ASSERT_NE(stored_id, 0);
    ASSERT_EQ(runs.rowCount(), 1);  // one run, one row: stored and in the monitor
    EXPECT_EQ(runs.run_id(runs.row_of_tracked(stored_key)), stored_id);
    ASSERT_EQ(page.shown_rows(), 1);
    ASSERT_EQ(list->rowCount(), 1);
    EXPECT_EQ(list->index(0, 0).data().toString(), "juniper-h100n1-result_0.txt");
    const QModelIndex page_name = table->index(0, RunsModel::kNameColumn);
    EXPECT_EQ(page_name.data(Qt::DecorationRole).value<QColor>(), monitor.view(stored_key)->color);
    EXPECT_FALSE(page_name.data(Qt::CheckStateRole).isValid());  // shown or not is the monitor's to say
    EXPECT_FALSE(table->flags(page_name).testFlag(Qt::ItemIsUserCheckable));
    ASSERT_TRUE(page.select_run(stored_id));

    // A log followed without a stored row: the monitor's only.
    const QString log = dir.filePath(QStringLiteral("live.txt"));
    append_file(log, mllog_line("train_loss", 3.0, 1, 8));
    const int live_key = tracker.follow_log(log, QStringLiteral("live"));
    ASSERT_TRUE(
        wait_until([&] { return monitor.run(live_key)->metrics.points(Metric::kTrainLoss).size() == 1; }));
    EXPECT_EQ(runs.rowCount(), 2);
    EXPECT_EQ(page.shown_rows(), 1);
    ASSERT_EQ(list->rowCount(), 2);
    EXPECT_EQ(list->index(1, 0).data().toString(), "live");  // in the order opened
    EXPECT_EQ(page.selected_run(), stored_id);

    // Its end reaches the model's rows as the tracker reads it: the list's tooltip and the State cell.
    const int live_row = runs.row_of_tracked(live_key);
    std::vector<int> changed_rows;
    QObject::connect(
        &runs, &QAbstractItemModel::dataChanged,
        [&](const QModelIndex& top_left, const QModelIndex&) { changed_rows.push_back(top_left.row()); });
    append_file(log,
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": 5, \"event_type\": \"INTERVAL_END\", \"key\": "
                "\"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}\n");
    ASSERT_TRUE(wait_until([&] { return tracker.run(live_key)->state == RunState::kCompleted; }));
    EXPECT_NE(std::find(changed_rows.begin(), changed_rows.end(), live_row), changed_rows.end());
    EXPECT_EQ(runs.index(live_row, RunsModel::kStateColumn).data().toString(),
              display_text(RunState::kCompleted));
    EXPECT_EQ(list->index(1, 0).data(Qt::ToolTipRole).toString(),
              QStringLiteral("live: %1").arg(display_text(RunState::kCompleted)));

    // Unchecked in the list: the model says so to the monitor, which hides its curves.
    ASSERT_TRUE(list->setData(list->index(0, 0), Qt::Unchecked, Qt::CheckStateRole));
    EXPECT_FALSE(runs.is_shown(stored_key));
    EXPECT_FALSE(monitor.plot(Metric::kTrainLoss)->raw_graph(stored_key)->visible());

    // Removed from the monitor: its stored row stays on the Runs page, selected; the unstored run is gone.
    monitor.remove_run(stored_key);
    ASSERT_EQ(list->rowCount(), 1);
    EXPECT_EQ(monitor.current_run(), live_key);
    EXPECT_EQ(page.shown_rows(), 1);
    EXPECT_EQ(page.selected_run(), stored_id);
    EXPECT_FALSE(table->index(0, RunsModel::kNameColumn).data(Qt::DecorationRole).isValid());
    monitor.remove_run(live_key);
    EXPECT_EQ(list->rowCount(), 0);
    EXPECT_EQ(runs.rowCount(), 1);
}

// A run the tracker adds before the model has read its stored row is one row once the store is read (the row
// joins it), and a stored row deleted while the monitor shows its run leaves the Runs page but not the
// monitor.
TEST(SharedRunsModel, AStoredRowJoinsItsFollowedRunAndItsDeletionLeavesTheMonitorAlone) {
    QTemporaryDir dir;
    Result<std::unique_ptr<RunHistory>> history =
        RunHistory::open(dir.filePath(QStringLiteral("h.sqlite")).toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    FollowService follow;
    RunTracker tracker(history->get(), &follow, nullptr, {});
    RunsModel runs(history->get(), &tracker);
    RunsPage page(history->get(), &runs);
    MonitorWidget monitor(&tracker, &runs);
    QAbstractItemModel* list = monitor.findChild<QListView*>()->model();

    int loaded = 0;
    QObject::connect(&tracker, &RunTracker::loaded, [&](int key) { loaded = key; });
    ASSERT_TRUE(tracker.open_log(fixture_log("dell-xe9680-result_0.txt")).ok());
    ASSERT_TRUE(wait_until([&] { return loaded != 0; }));
    const int64_t id = tracker.run(loaded)->store_id;
    ASSERT_EQ(runs.rowCount(), 1);  // the tracker's run; the store not read since
    EXPECT_EQ(page.shown_rows(), 0);
    const QPersistentModelIndex monitor_row = list->index(0, 0);

    page.reload();
    ASSERT_EQ(runs.rowCount(), 1);  // joined, not a second row
    EXPECT_EQ(runs.run_id(0), id);
    EXPECT_EQ(page.shown_rows(), 1);
    EXPECT_TRUE(monitor_row.isValid());  // the monitor's row (its current run) stayed
    EXPECT_EQ(monitor.current_run(), loaded);

    // The monitor lists its runs in the order it got them, whatever their order in the model: an older
    // stored run shown after a followed log comes after it.
    StoredRun older;
    older.name = "older";
    older.cluster = "hpc";
    older.state = RunState::kCompleted;
    const Result<int64_t> older_id = (*history)->add_run(older);
    ASSERT_TRUE(older_id.ok()) << older_id.error();
    page.reload();
    const QString log = dir.filePath(QStringLiteral("live.txt"));
    append_file(log, mllog_line("train_loss", 3.0, 1, 8));
    const int live_key = tracker.follow_log(log, QStringLiteral("live"));
    const Result<int> older_key = tracker.show_stored(*older_id);
    ASSERT_TRUE(older_key.ok()) << older_key.error();
    ASSERT_EQ(runs.rowCount(), 3);
    ASSERT_LT(runs.row_of(*older_id),
              runs.row_of_tracked(live_key));  // the model's order is not the monitor's
    ASSERT_EQ(list->rowCount(), 3);
    EXPECT_EQ(list->index(0, 0).data().toString(), "dell-xe9680-result_0.txt");
    EXPECT_EQ(list->index(1, 0).data().toString(), "live");
    EXPECT_EQ(list->index(2, 0).data().toString(), "older");
    monitor.remove_run(*older_key);
    tracker.release(live_key);
    ASSERT_EQ(list->rowCount(), 1);

    ASSERT_TRUE((*history)->remove_run(id).ok());
    page.reload();
    EXPECT_EQ(page.shown_rows(), 1);  // the older run
    ASSERT_EQ(list->rowCount(), 1);
    EXPECT_EQ(runs.run_id(runs.row_of_tracked(loaded)), 0);
    EXPECT_EQ(monitor.current_run(), loaded);
}

// A cluster submission: the session's worker writes the run's row while the tracker waits for its answer, so
// the model can read the row (another reload) before the tracker knows its id. The two rows are one once it
// does: at the next reload, with the Runs page's selection and the monitor's current run on the run still.
TEST(SharedRunsModel, ASubmissionsRowReadBeforeTheTrackerKnowsItsIdJoinsItsRun) {
    QTemporaryDir dir;
    Result<std::unique_ptr<RunHistory>> history =
        RunHistory::open(dir.filePath(QStringLiteral("h.sqlite")).toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    testing_util::FakeCluster cluster;
    cluster.refuse_submissions("Requested node configuration is not available");
    ClusterSessions sessions;
    sessions.set_connector(cluster.connector());
    remote::ClusterProfile hpc;
    hpc.name = "hpc";
    hpc.host = "login.example.org";
    hpc.user = "researcher";
    sessions.set_profiles({hpc});
    sessions.set_store_path(QString::fromStdString((*history)->path()));
    FollowService follow;
    RunTracker::Options options;
    options.resource_root = QString::fromUtf8(test_paths::source_dir());
    options.engine_binary = testing_util::fake_engine();
    RunTracker tracker(history->get(), &follow, &sessions, options);
    // Heard before the model hears it: the answer's state comes before the tracker links the row.
    std::unique_ptr<RunsPage> page;
    QObject::connect(&tracker, &RunTracker::run_changed, [&](int key) {
        if (tracker.run(key)->state == RunState::kFailed && tracker.run(key)->store_id == 0) page->reload();
    });
    RunsModel runs(history->get(), &tracker);
    page = std::make_unique<RunsPage>(history->get(), &runs);
    MonitorWidget monitor(&tracker, &runs);
    auto* list = monitor.findChild<QListView*>();

    const Result<int> key = tracker.submit_cluster(testing_util::demo_config(), "hpc");
    ASSERT_TRUE(key.ok()) << key.error();
    ASSERT_TRUE(wait_until([&] { return tracker.run(*key)->store_id != 0; }));
    const int64_t id = tracker.run(*key)->store_id;
    ASSERT_EQ(runs.rowCount(), 2);  // the row read early, and the tracker's run
    ASSERT_TRUE(page->select_run(id));
    const QPersistentModelIndex current = list->currentIndex();
    ASSERT_TRUE(current.isValid());
    EXPECT_EQ(monitor.current_run(), *key);

    page->reload();
    ASSERT_EQ(runs.rowCount(), 1);
    const int row = runs.row_of(id);
    EXPECT_EQ(runs.row_of_tracked(*key), row);
    EXPECT_EQ(page->selected_run(), id);
    EXPECT_EQ(page->shown_rows(), 1);
    ASSERT_EQ(list->model()->rowCount(), 1);
    EXPECT_TRUE(current.isValid());  // the monitor's current row moved with its run
    EXPECT_EQ(list->currentIndex(), list->model()->index(0, 0));
    EXPECT_EQ(monitor.current_run(), *key);
    EXPECT_EQ(runs.index(row, RunsModel::kStateColumn)
                  .data()
                  .toString()
                  .left(display_text(RunState::kFailed).size()),
              display_text(RunState::kFailed));
}

}  // namespace
}  // namespace slipway::app
