// The training-curve plot: train_loss and eval_accuracy of one log against samples_count (QCustomPlot).
#pragma once

#include <QWidget>

#include "contract/log_summary.h"

class QCPGraph;
class QCustomPlot;

namespace slipway::app {

class LogPlotWidget : public QWidget {
    Q_OBJECT

public:
    explicit LogPlotWidget(QWidget* parent = nullptr);

    // Replaces what is drawn with the curves of `summary`.
    void show_summary(const LogSummary& summary);
    void clear();

    QCustomPlot* plot() const { return plot_; }
    QCPGraph* train_loss_graph() const { return train_loss_; }
    QCPGraph* eval_accuracy_graph() const { return eval_accuracy_; }

private:
    QCustomPlot* plot_;
    QCPGraph* train_loss_;
    QCPGraph* eval_accuracy_;
};

}  // namespace slipway::app
