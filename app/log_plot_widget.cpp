// The training-curve plot: one QCustomPlot, two graphs on a shared samples axis.
#include "log_plot_widget.h"

#include <qcustomplot.h>
#include <QVBoxLayout>
#include <QVector>

#include "log_series.h"

namespace slipway::app {
namespace {

void set_series(QCPGraph* graph, const Series& series) {
    graph->setData(QVector<double>(series.x.begin(), series.x.end()),
                   QVector<double>(series.y.begin(), series.y.end()));
}

}  // namespace

LogPlotWidget::LogPlotWidget(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);

    plot_->xAxis->setLabel(tr("samples"));
    // In llama2_70b_lora both curves are losses (eval_accuracy is the eval loss), so one y axis fits both.
    plot_->yAxis->setLabel(tr("loss"));
    plot_->legend->setVisible(true);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);

    train_loss_ = plot_->addGraph();
    train_loss_->setName(QStringLiteral("train_loss"));
    train_loss_->setPen(QPen(QColor(31, 119, 180), 1.5));

    eval_accuracy_ = plot_->addGraph();
    eval_accuracy_->setName(QStringLiteral("eval_accuracy"));
    eval_accuracy_->setPen(QPen(QColor(214, 39, 40), 2.0));
    eval_accuracy_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
}

void LogPlotWidget::show_summary(const LogSummary& summary) {
    set_series(train_loss_, metric_series(summary.train_loss));
    set_series(eval_accuracy_, metric_series(summary.eval_accuracy));
    plot_->rescaleAxes();
    plot_->replot();
}

void LogPlotWidget::clear() {
    train_loss_->data()->clear();
    eval_accuracy_->data()->clear();
    plot_->replot();
}

}  // namespace slipway::app
