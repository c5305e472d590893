// The main window of the desktop app: File > Open log... shows a log's curves; File > Quit.
#pragma once

#include <QMainWindow>
#include <QString>
#include <QTimer>

#include "contract/status.h"

namespace slipway::app {

class LogPlotWidget;

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);

    // Reads the log at `path` and plots it; on failure the plot is unchanged and the error names the file.
    Status open_log(const QString& path);

    // Re-plots the log at `path` whenever it grows (checked twice a second); a file that does not exist
    // yet is waited for. For a run writing its MLLOG right now, e.g. the local demo.
    void follow_log(const QString& path);

    LogPlotWidget* plot_widget() const { return plot_; }

private:
    void choose_log();  // File > Open log...: asks for a file, reports errors in a message box

    LogPlotWidget* plot_;
    QTimer* follow_timer_ = nullptr;
    qint64 followed_size_ = -1;
};

}  // namespace slipway::app
