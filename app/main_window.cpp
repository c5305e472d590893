// The main window: menu wiring and loading a log into the plot.
#include "main_window.h"

#include <QAction>
#include <QCoreApplication>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>

#include "contract/log_summary.h"
#include "log_plot_widget.h"

namespace slipway::app {
namespace {

QString summary_text(const QString& path, const LogSummary& s) {
    const QString status = s.status ? QString::fromStdString(*s.status) : MainWindow::tr("no run_stop");
    QString text = MainWindow::tr("%1: %2 lines (%3 MLLOG, %4 bad), %5")
                       .arg(QFileInfo(path).fileName())
                       .arg(s.lines)
                       .arg(s.mllog_lines)
                       .arg(s.bad_lines)
                       .arg(status);
    if (s.time_to_train_ms) {
        text += MainWindow::tr(", time to train %1 min").arg(*s.time_to_train_ms / 60000.0, 0, 'f', 2);
    }
    return text + MainWindow::tr(", %1 eval_accuracy / %2 train_loss points")
                      .arg(s.eval_accuracy.size())
                      .arg(s.train_loss.size());
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), plot_(new LogPlotWidget(this)) {
    setWindowTitle(QStringLiteral("Slipway"));
    setCentralWidget(plot_);
    resize(1000, 650);

    QMenu* file_menu = menuBar()->addMenu(tr("&File"));
    QAction* open = file_menu->addAction(tr("&Open log..."));
    open->setShortcut(QKeySequence::Open);
    connect(open, &QAction::triggered, this, &MainWindow::choose_log);
    file_menu->addSeparator();
    QAction* quit = file_menu->addAction(tr("&Quit"));
    quit->setShortcut(QKeySequence::Quit);
    connect(quit, &QAction::triggered, qApp, &QCoreApplication::quit, Qt::QueuedConnection);

    statusBar()->showMessage(tr("File > Open log... to plot an MLLOG training log"));
}

Status MainWindow::open_log(const QString& path) {
    // encodeName: the file system's bytes, also for names that are not UTF-8.
    const Result<LogSummary> summary = summarize_log_file(QFile::encodeName(path).toStdString());
    if (!summary.ok()) return summary.status();
    plot_->show_summary(*summary);
    statusBar()->showMessage(summary_text(path, *summary));
    return Status::Ok();
}

void MainWindow::follow_log(const QString& path) {
    if (follow_timer_ == nullptr) {
        follow_timer_ = new QTimer(this);
        follow_timer_->setInterval(500);
    }
    follow_timer_->disconnect();
    followed_size_ = -1;
    connect(follow_timer_, &QTimer::timeout, this, [this, path] {
        const QFileInfo info(path);
        if (!info.exists() || info.size() == followed_size_) return;
        followed_size_ = info.size();
        const Status status = open_log(path);
        if (!status.ok()) statusBar()->showMessage(QString::fromStdString(status.message()));
    });
    follow_timer_->start();
    statusBar()->showMessage(tr("Waiting for %1").arg(path));
}

void MainWindow::choose_log() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open log"), QString(),
                                                      tr("Logs (*.txt *.log *.out);;All files (*)"));
    if (path.isEmpty()) return;
    const Status status = open_log(path);
    if (!status.ok()) QMessageBox::warning(this, tr("Open log"), QString::fromStdString(status.message()));
}

}  // namespace slipway::app
