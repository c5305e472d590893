// GUI tests of the main window (offscreen): menus and pages, real MLPerf logs in the monitor with the
// hand-checked point counts, following a growing log, settings and history across a restart, opened log
// files kept in the history (one run per file, state from run_stop).
#include "main_window.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <QAction>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPainter>
#include <QPushButton>
#include <QStatusBar>
#include <QStyleOptionViewItem>
#include <QTableView>
#include <QTemporaryDir>

#include <cstring>

#include "history/run_history.h"
#include "monitor/metric_plot.h"
#include "monitor/monitor_widget.h"
#include "runs/run_tracker.h"
#include "runs/runs_model.h"
#include "runs_page.h"
#include "test_util.h"
#include "track/crc32c.h"

namespace slipway::app {
namespace {

using testing_util::append_file;
using testing_util::fixture_log;
using testing_util::fixture_logs;
using testing_util::mllog_line;
using testing_util::wait_until;

QStringList action_texts(const QMenu* menu) {
    QStringList texts;
    for (const QAction* action : menu->actions()) {
        if (!action->isSeparator()) texts << action->text().remove('&');
    }
    return texts;
}

int points(const MonitorWidget* monitor, int key, Metric metric) {
    const QCPGraph* g = monitor->plot(metric)->raw_graph(key);
    return g == nullptr ? -1 : g->dataCount();
}

// Opens `path` in the window's monitor and waits until it is read.
int open_and_wait(MainWindow& window, const QString& path) {
    int loaded_key = 0;
    auto c = QObject::connect(window.tracker(), &RunTracker::loaded, [&](int key) { loaded_key = key; });
    EXPECT_TRUE(window.open_log(path).ok());
    EXPECT_TRUE(wait_until([&] { return loaded_key != 0; }));
    QObject::disconnect(c);
    return loaded_key;
}

class MainWindowTest : public ::testing::Test {
protected:
    testing_util::IsolatedHome home;
    QString history_path() const { return home.path() + "/history.sqlite"; }
};

TEST_F(MainWindowTest, MenusShortcutsAndPages) {
    MainWindow window(history_path());
    window.show();
    EXPECT_EQ(window.windowTitle(), "Slipway");
    const QList<QAction*> menus = window.menuBar()->actions();
    ASSERT_EQ(menus.size(), 4);
    EXPECT_EQ(menus[0]->text().remove('&'), "File");
    EXPECT_EQ(action_texts(menus[0]->menu()),
              (QStringList{"New run", "Open run config...", "Recent run configs", "Save run config as...",
                           "Import training script...", "Open log...", "Open log on a cluster...",
                           "Export plots as PNG...", "Export plots as CSV...", "Quit"}));
    EXPECT_EQ(action_texts(menus[1]->menu()), (QStringList{"Submit", "Cancel selected run"}));
    EXPECT_EQ(action_texts(menus[2]->menu()), (QStringList{"Runs", "Editor", "Monitor", "Clusters", "Chat",
                                                           "Language adaptation", "Language"}));
    const QList<QAction*> view = menus[2]->menu()->actions();
    EXPECT_EQ(view[2]->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_3));
    view[2]->trigger();
    EXPECT_EQ(window.current_page(), MainWindow::kMonitorPage);
    view[3]->trigger();
    EXPECT_EQ(window.current_page(), MainWindow::kClustersPage);
    EXPECT_EQ(view[4]->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_5));
    view[4]->trigger();
    EXPECT_EQ(window.current_page(), MainWindow::kChatPage);
}

TEST_F(MainWindowTest, MonitorPlotsTheThreeFixtureLogsOverlaidWithEveryPoint) {
    MainWindow window(history_path());
    window.show();
    const int dell = open_and_wait(window, fixture_log("dell-xe9680-result_0.txt"));
    const int fujitsu = open_and_wait(window, fixture_log("fujitsu-gx2560m7-result_0.txt"));
    const int juniper = open_and_wait(window, fixture_log("juniper-h100n1-result_0.txt"));
    const MonitorWidget* m = window.monitor();
    // Counts from tests/contract/log_summary_test.cpp (checked by hand with grep).
    EXPECT_EQ(points(m, dell, Metric::kEvalAccuracy), 5);
    EXPECT_EQ(points(m, dell, Metric::kTrainLoss), 0);
    EXPECT_EQ(points(m, fujitsu, Metric::kEvalAccuracy), 5);
    EXPECT_EQ(points(m, juniper, Metric::kTrainLoss), 46);
    EXPECT_EQ(points(m, juniper, Metric::kEvalAccuracy), 7);
    const QCPGraph* loss = m->plot(Metric::kTrainLoss)->raw_graph(juniper);
    EXPECT_EQ(loss->data()->at(0)->key, 80.0);
    EXPECT_EQ(loss->data()->at(0)->value, 3.7142);
    EXPECT_EQ(loss->data()->at(45)->key, 3760.0);
    EXPECT_EQ(m->plot(Metric::kEvalAccuracy)->raw_graph(juniper)->data()->at(6)->value, 0.9246053695678711);
    // llama2_70b_lora's target line, and the axes fitted to all three runs.
    ASSERT_TRUE(m->plot(Metric::kEvalAccuracy)->target().has_value());
    EXPECT_EQ(*m->plot(Metric::kEvalAccuracy)->target(), 0.925);
    EXPECT_TRUE(m->plot(Metric::kEvalAccuracy)->target_line()->visible());
    // The plot says what MLPerf's eval_accuracy is for this benchmark, and so does the status line.
    EXPECT_EQ(m->plot(Metric::kEvalAccuracy)->title(), "eval loss (MLPerf eval_accuracy)");
    EXPECT_TRUE(m->status_text().contains("eval loss (MLPerf eval_accuracy) 0.9246"))
        << m->status_text().toStdString();
    EXPECT_LE(m->plot(Metric::kTrainLoss)->xAxis->range().lower, 80.0);
    EXPECT_GE(m->plot(Metric::kTrainLoss)->xAxis->range().upper, 3760.0);
    EXPECT_TRUE(m->status_text().contains("run_stop: success")) << m->status_text().toStdString();
    EXPECT_TRUE(m->status_text().contains("elapsed 1:55:16")) << m->status_text().toStdString();
    EXPECT_GT(m->log_view()->blockCount(), 80);
}

TEST_F(MainWindowTest, UnreadableLogNamesTheFileAndChangesNothing) {
    MainWindow window(history_path());
    const QString missing = fixture_log("no-such-log.txt");
    const Status status = window.open_log(missing);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find(missing.toStdString()), std::string::npos) << status.message();
    EXPECT_TRUE(window.monitor()->run_keys().empty());
}

TEST_F(MainWindowTest, FollowReplotsALogAsItGrows) {
    QTemporaryDir dir;
    const QString path = dir.filePath("growing_mllog.txt");
    MainWindow window(history_path());
    window.follow_log(path);
    const int key = window.monitor()->run_keys().front();
    append_file(path, mllog_line("train_loss", 3.0, 1, 8));
    EXPECT_TRUE(wait_until([&] { return points(window.monitor(), key, Metric::kTrainLoss) == 1; }));
    append_file(path, mllog_line("train_loss", 2.5, 2, 16) + mllog_line("lr", 1e-4, 2, 16));
    EXPECT_TRUE(wait_until([&] { return points(window.monitor(), key, Metric::kTrainLoss) == 2; }));
    EXPECT_EQ(points(window.monitor(), key, Metric::kLearningRate), 1);
}

TEST_F(MainWindowTest, SettingsAndRecentConfigsPersist) {
    const QString preset = QString::fromUtf8(test_paths::source_dir("/resources/presets/demo-tiny.json"));
    {
        MainWindow window(history_path());
        window.show();
        ASSERT_TRUE(window.open_run_config(preset).ok());
        window.monitor()->set_smoothing(0.85);
        window.monitor()->set_x_axis(XAxis::kWallTime);
        window.show_page(MainWindow::kClustersPage);
        window.close();
    }
    MainWindow window(history_path());
    EXPECT_EQ(window.recent_configs(), QStringList{preset});
    EXPECT_EQ(window.current_page(), MainWindow::kClustersPage);
    EXPECT_DOUBLE_EQ(window.monitor()->plot(Metric::kTrainLoss)->smoothing(), 0.85);
    EXPECT_EQ(window.monitor()->x_axis(), XAxis::kWallTime);
}

TEST_F(MainWindowTest, FollowedRunComesBackFromTheHistoryAfterARestart) {
    QTemporaryDir dir;
    const QString log = dir.filePath("mllog.txt");
    int64_t id = 0;
    {
        MainWindow window(history_path());
        StoredRun record;
        record.name = "stored";
        record.state = RunState::kRunning;
        record.log_path = log.toStdString();
        id = *window.history()->add_run(record);
        append_file(log, mllog_line("train_loss", 3.0, 1, 8) + mllog_line("train_loss", 2.0, 2, 16));
        ASSERT_TRUE(window.resume_history_run(id).ok());
        ASSERT_TRUE(wait_until([&] { return *window.history()->point_count(id) == 2; }));
    }
    append_file(log, mllog_line("train_loss", 1.5, 3, 24));
    MainWindow window(history_path());
    const Result<int> shown = window.show_history_run(id);
    ASSERT_TRUE(shown.ok()) << shown.error();
    EXPECT_EQ(points(window.monitor(), *shown, Metric::kTrainLoss), 2);
    // Resuming reads only what was written after the last stored offset.
    const Result<int> resumed = window.resume_history_run(id);
    ASSERT_TRUE(resumed.ok());
    EXPECT_TRUE(wait_until([&] { return points(window.monitor(), *resumed, Metric::kTrainLoss) == 3; }));
    EXPECT_TRUE(wait_until([&] { return *window.history()->point_count(id) == 3; }));
}

TEST_F(MainWindowTest, OpenedLogFilesAreKeptInTheHistoryOncePerFile) {
    const QString juniper = fixture_log("juniper-h100n1-result_0.txt");
    QTemporaryDir dir;
    const QString unfinished = dir.filePath("slurm-42.out");
    append_file(unfinished,
                "starting\n" + mllog_line("train_loss", 3.0, 1, 8) + mllog_line("train_loss", 2.5, 2, 16));
    int64_t id = 0;
    {
        MainWindow window(history_path());
        open_and_wait(window, juniper);
        open_and_wait(window, unfinished);
        const Result<std::vector<StoredRun>> runs = window.history()->runs();
        ASSERT_TRUE(runs.ok());
        ASSERT_EQ(runs->size(), 2u);
        const StoredRun& mlperf = (*runs)[1];  // newest first
        id = mlperf.id;
        EXPECT_EQ(mlperf.name, "juniper-h100n1-result_0.txt");
        EXPECT_EQ(mlperf.cluster, kOpenedLogCluster);
        EXPECT_EQ(mlperf.log_path, QFileInfo(juniper).canonicalFilePath().toStdString());
        EXPECT_EQ(mlperf.state, RunState::kCompleted);  // run_stop status success
        EXPECT_EQ(mlperf.finished_ms, 1715157926587);   // run_stop's time_ms
        EXPECT_NE(mlperf.started_ms, 0);
        EXPECT_EQ(*window.history()->point_count(id), 46 + 7);  // train_loss + eval_accuracy
        EXPECT_EQ((*runs)[0].state, RunState::kIncomplete);     // no run_stop
        EXPECT_EQ(*window.history()->point_count((*runs)[0].id), 2);
        EXPECT_EQ(window.runs_page()->model()->rowCount(), 2);

        // Opened again (the file may have grown): the same run, read again, shown once in the monitor.
        const size_t shown_before = window.monitor()->run_keys().size();
        open_and_wait(window, fixture_log("../mlperf-logs/juniper-h100n1-result_0.txt"));
        EXPECT_EQ(window.monitor()->run_keys().size(), shown_before);
        ASSERT_EQ(window.history()->runs()->size(), 2u);
        EXPECT_EQ(*window.history()->point_count(id), 46 + 7);
        EXPECT_EQ(window.history()->run(id)->state, RunState::kCompleted);
    }
    // After a restart the plots come back from the history alone.
    MainWindow window(history_path());
    EXPECT_EQ(window.runs_page()->model()->rowCount(), 2);
    const Result<int> shown = window.show_history_run(id);
    ASSERT_TRUE(shown.ok()) << shown.error();
    EXPECT_EQ(points(window.monitor(), *shown, Metric::kTrainLoss), 46);
    EXPECT_EQ(points(window.monitor(), *shown, Metric::kEvalAccuracy), 7);
    EXPECT_EQ(window.monitor()->run(*shown)->state, RunState::kCompleted);
}

// Export to TensorBoard: a stored run's points as one event file of whole TFRecords (framing and masked
// CRC-32C checked here; TensorBoard's own reader reads the same writer's files in tensorboard_check.py).
TEST_F(MainWindowTest, RunsPageExportsAStoredRunToTensorBoard) {
    MainWindow window(history_path());
    open_and_wait(window, fixture_log("juniper-h100n1-result_0.txt"));
    RunsPage* page = window.runs_page();
    page->reload();
    ASSERT_EQ(page->model()->rowCount(), 1);
    const int64_t id =
        page->table()->model()->index(0, RunsModel::kIdColumn).data(RunsModel::kRunIdRole).toLongLong();
    QTemporaryDir folder;
    const Result<QString> written =
        page->export_metrics(id, track::ExportFormat::kTensorBoard, folder.path());
    ASSERT_TRUE(written.ok()) << written.error();
    EXPECT_TRUE(written->startsWith(folder.path() + "/juniper-h100n1-result_0.txt/events.out.tfevents."))
        << written->toStdString();
    QFile file(*written);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const std::string data = file.readAll().toStdString();
    int64_t records = 0;
    size_t at = 0;
    while (at + 12 <= data.size()) {
        uint64_t length = 0;
        uint32_t length_crc = 0, data_crc = 0;
        std::memcpy(&length, data.data() + at, 8);
        std::memcpy(&length_crc, data.data() + at + 8, 4);
        ASSERT_LE(at + 16 + length, data.size());
        std::memcpy(&data_crc, data.data() + at + 12 + length, 4);
        EXPECT_EQ(length_crc, track::masked_crc32c(data.substr(at, 8)));
        EXPECT_EQ(data_crc, track::masked_crc32c(data.substr(at + 12, length)));
        at += 16 + length;
        ++records;
    }
    EXPECT_EQ(at, data.size());
    EXPECT_EQ(records, 1 + *window.history()->point_count(id));  // file_version, then one per stored point
    EXPECT_FALSE(page->export_metrics(id + 1000, track::ExportFormat::kTensorBoard, folder.path()).ok());
}

// Export to MLflow: the same stored run as a FINISHED run in an MLflow file store, a line per stored point
// (MLflow's own client reads the same writer's runs in mlflow_check.py).
TEST_F(MainWindowTest, RunsPageExportsAStoredRunToMlflow) {
    MainWindow window(history_path());
    open_and_wait(window, fixture_log("juniper-h100n1-result_0.txt"));
    RunsPage* page = window.runs_page();
    page->reload();
    const int64_t id =
        page->table()->model()->index(0, RunsModel::kIdColumn).data(RunsModel::kRunIdRole).toLongLong();
    QTemporaryDir store;
    const Result<QString> written = page->export_metrics(id, track::ExportFormat::kMlflow, store.path());
    ASSERT_TRUE(written.ok()) << written.error();
    EXPECT_TRUE(written->startsWith(store.path() + "/0/")) << written->toStdString();
    const auto lines_of = [&](const QString& name) {
        QFile file(*written + "/" + name);
        return file.open(QIODevice::ReadOnly) ? file.readAll().split('\n') : QList<QByteArray>();
    };
    EXPECT_EQ(lines_of("metrics/eval/accuracy").size(), 7 + 1);  // the last line ends with '\n'
    EXPECT_EQ(lines_of("tags/mlflow.runName").value(0), "juniper-h100n1-result_0.txt");
    EXPECT_TRUE(lines_of("meta.yaml").contains("status: 3")) << "FINISHED, as the history has it";
}

// The Runs page: a small train_loss curve per run (sampled by the store), a filter, and Compare selected,
// which overlays the chosen runs alone in the monitor.
TEST_F(MainWindowTest, RunsPageCurvesFilterAndCompare) {
    MainWindow window(history_path());
    for (const QString& log : fixture_logs())
        open_and_wait(window, log);
    RunsPage* page = window.runs_page();
    page->reload();
    QTableView* table = page->table();
    QAbstractItemModel* shown_model = table->model();  // the view's (filtered, sorted) rows
    ASSERT_EQ(shown_model->rowCount(), 3);
    int with_curve = 0;
    int juniper_row = -1;
    for (int row = 0; row < shown_model->rowCount(); ++row) {
        const QList<double> curve = shown_model->index(row, RunsModel::kLossColumn)
                                        .data(RunsModel::kCurveRole)
                                        .value<QList<double>>();
        with_curve += curve.size() >= 2 ? 1 : 0;
        if (shown_model->index(row, RunsModel::kNameColumn).data().toString().startsWith("juniper"))
            juniper_row = row;
    }
    EXPECT_EQ(with_curve, 1);  // only juniper's log has train_loss
    ASSERT_GE(juniper_row, 0);
    // The column's delegate draws the sampled curve in its cell.
    QImage image(QSize(96, 22), QImage::Format_ARGB32);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        QStyleOptionViewItem option;
        option.rect = image.rect();
        table->itemDelegateForColumn(RunsModel::kLossColumn)
            ->paint(&painter, option, shown_model->index(juniper_row, RunsModel::kLossColumn));
    }
    const QColor line(31, 119, 180);
    int drawn = 0;  // pixels the line covers (antialiased: near its colour)
    for (int x = 0; x < image.width(); ++x) {
        for (int y = 0; y < image.height(); ++y) {
            const QColor c = image.pixelColor(x, y);
            drawn += std::abs(c.red() - line.red()) + std::abs(c.green() - line.green()) +
                                 std::abs(c.blue() - line.blue()) <
                             120
                         ? 1
                         : 0;
        }
    }
    EXPECT_GT(drawn, image.width() / 2);
    const int64_t juniper_id =
        shown_model->index(juniper_row, RunsModel::kIdColumn).data(RunsModel::kRunIdRole).toLongLong();
    const Result<std::vector<double>> sampled =
        window.history()->sampled_values(juniper_id, Metric::kTrainLoss, 10);
    ASSERT_TRUE(sampled.ok());
    EXPECT_LE(sampled->size(), 11u);  // every 5th of 46, and the last
    EXPECT_EQ(sampled->front(), 3.7142);
    EXPECT_EQ(sampled->back(), window.monitor()
                                   ->run(window.tracker()->run_for_store(juniper_id))
                                   ->metrics.points(Metric::kTrainLoss)
                                   .back()
                                   .value);

    page->filter_box()->setText("FUJITSU");
    EXPECT_EQ(page->shown_rows(), 1);
    page->filter_box()->clear();
    EXPECT_EQ(page->shown_rows(), 3);

    QList<qint64> compared;
    QObject::connect(page, &RunsPage::compare_requested, [&](const QList<qint64>& ids) { compared = ids; });
    EXPECT_FALSE(page->compare_button()->isEnabled());
    table->selectionModel()->select(table->model()->index(0, 0),
                                    QItemSelectionModel::Select | QItemSelectionModel::Rows);
    table->selectionModel()->select(table->model()->index(1, 0),
                                    QItemSelectionModel::Select | QItemSelectionModel::Rows);
    ASSERT_TRUE(page->compare_button()->isEnabled());
    page->reload();  // a live reload keeps the selection
    EXPECT_EQ(page->selected_runs().size(), 2);
    page->compare_button()->click();
    ASSERT_EQ(compared.size(), 2);
    ASSERT_TRUE(window.compare_runs(compared).ok());
    EXPECT_EQ(window.current_page(), MainWindow::kMonitorPage);
    int visible = 0;
    for (const int key : window.monitor()->run_keys()) {
        const bool is_compared = compared.contains(window.monitor()->run(key)->store_id);
        EXPECT_EQ(window.monitor()->plot(Metric::kEvalAccuracy)->raw_graph(key)->visible(), is_compared);
        visible += is_compared ? 1 : 0;
    }
    EXPECT_EQ(visible, 2);
}

}  // namespace
}  // namespace slipway::app
