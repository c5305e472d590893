// The main window of the desktop app: File > Open log... shows a log's curves; File > Quit.
#pragma once

#include <QMainWindow>
#include <QString>

#include "contract/status.h"

namespace slipway::app {

class LogPlotWidget;

class MainWindow : public QMainWindow {
    Q_OBJECT

  public:
    explicit MainWindow(QWidget* parent = nullptr);

    // Reads the log at `path` and plots it; on failure the plot is unchanged and the error names the file.
    Status open_log(const QString& path);

    LogPlotWidget* plot_widget() const { return plot_; }

  private:
    void choose_log();  // File > Open log...: asks for a file, reports errors in a message box

    LogPlotWidget* plot_;
};

}  // namespace slipway::app
