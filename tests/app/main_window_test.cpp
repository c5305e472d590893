// GUI smoke test (offscreen): the main window, its menu, and a real log loaded into the plot.
#include "main_window.h"

#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QAction>
#include <QElapsedTimer>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>

#include "log_plot_widget.h"

namespace slipway::app {
namespace {

const QString kDataDir = QStringLiteral(SLIPWAY_TEST_DATA_DIR "/mlperf-logs");

QStringList action_texts(const QMenu* menu) {
    QStringList texts;
    for (const QAction* action : menu->actions()) {
        if (!action->isSeparator()) texts << action->text().remove('&');
    }
    return texts;
}

TEST(MainWindow, HasTitleAndFileMenu) {
    MainWindow window;
    window.show();
    EXPECT_EQ(window.windowTitle(), "Slipway");
    const QList<QAction*> menus = window.menuBar()->actions();
    ASSERT_EQ(menus.size(), 1);
    EXPECT_EQ(menus[0]->text().remove('&'), "File");
    ASSERT_NE(menus[0]->menu(), nullptr);
    EXPECT_EQ(action_texts(menus[0]->menu()), (QStringList{"Open log...", "Quit"}));
}

TEST(MainWindow, LoadsARealLogIntoThePlot) {
    MainWindow window;
    window.show();
    const LogPlotWidget* plot = window.plot_widget();
    EXPECT_EQ(plot->train_loss_graph()->dataCount(), 0);

    ASSERT_TRUE(window.open_log(kDataDir + "/juniper-h100n1-result_0.txt").ok());
    const QCPGraph* loss = plot->train_loss_graph();
    const QCPGraph* eval = plot->eval_accuracy_graph();
    ASSERT_EQ(loss->dataCount(), 46);
    ASSERT_EQ(eval->dataCount(), 7);
    EXPECT_EQ(loss->data()->at(0)->key, 80.0);
    EXPECT_EQ(loss->data()->at(0)->value, 3.7142);
    EXPECT_EQ(loss->data()->at(45)->key, 3760.0);
    EXPECT_EQ(loss->data()->at(45)->value, 1.2826);
    EXPECT_EQ(eval->data()->at(6)->key, 3840.0);
    EXPECT_EQ(eval->data()->at(6)->value, 0.9246053695678711);
    // The axes were fitted to the data.
    EXPECT_LE(plot->plot()->xAxis->range().lower, 80.0);
    EXPECT_GE(plot->plot()->xAxis->range().upper, 3840.0);
    EXPECT_TRUE(window.statusBar()->currentMessage().contains("89 lines"))
        << window.statusBar()->currentMessage().toStdString();
    EXPECT_TRUE(window.statusBar()->currentMessage().contains("115.28 min"));

    // A log without train_loss replaces both curves.
    ASSERT_TRUE(window.open_log(kDataDir + "/fujitsu-gx2560m7-result_0.txt").ok());
    EXPECT_EQ(loss->dataCount(), 0);
    EXPECT_EQ(eval->dataCount(), 5);
}

TEST(MainWindow, UnreadableLogLeavesThePlotAndNamesTheFile) {
    MainWindow window;
    ASSERT_TRUE(window.open_log(kDataDir + "/dell-xe9680-result_0.txt").ok());
    const QString missing = kDataDir + "/no-such-log.txt";
    const Status status = window.open_log(missing);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find(missing.toStdString()), std::string::npos) << status.message();
    EXPECT_EQ(window.plot_widget()->eval_accuracy_graph()->dataCount(), 5);
}

TEST(LogPlotWidget, ClearEmptiesBothGraphs) {
    LogPlotWidget widget;
    LogSummary summary;
    summary.train_loss = {{8.0, 2.0}, {16.0, 1.5}};
    summary.eval_accuracy = {{16.0, 0.95}};
    widget.show_summary(summary);
    EXPECT_EQ(widget.train_loss_graph()->dataCount(), 2);
    EXPECT_EQ(widget.eval_accuracy_graph()->dataCount(), 1);
    widget.clear();
    EXPECT_EQ(widget.train_loss_graph()->dataCount(), 0);
    EXPECT_EQ(widget.eval_accuracy_graph()->dataCount(), 0);
}

}  // namespace
}  // namespace slipway::app

namespace slipway::app {
namespace {

TEST(MainWindowFollow, ReplotsALogAsItGrows) {
    const QString path = QString::fromStdString(testing::TempDir() + "/growing_mllog.txt");
    QFile::remove(path);
    MainWindow window;
    window.follow_log(path);
    auto write = [&](const char* text) {
        QFile f(path);
        ASSERT_TRUE(f.open(QIODevice::Append));
        f.write(text);
    };
    auto wait = [] {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 1500)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    };
    write(
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", \"key\": "
        "\"train_loss\", "
        "\"value\": 3.0, \"metadata\": {\"samples_count\": 8}}\n");
    wait();
    EXPECT_EQ(window.plot_widget()->train_loss_graph()->dataCount(), 1);
    write(
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 2, \"event_type\": \"POINT_IN_TIME\", \"key\": "
        "\"train_loss\", "
        "\"value\": 2.5, \"metadata\": {\"samples_count\": 16}}\n");
    wait();
    EXPECT_EQ(window.plot_widget()->train_loss_graph()->dataCount(), 2);
}

}  // namespace
}  // namespace slipway::app
