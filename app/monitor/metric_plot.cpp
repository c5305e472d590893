// MetricPlot: raw + smoothed QCPGraph per run, target line, log scale, auto-fit until the user moves.
#include "monitor/metric_plot.h"

#include <algorithm>
#include <cmath>

namespace slipway::app {

MetricPlot::MetricPlot(const QString& title, QWidget* parent)
    : QCustomPlot(parent),
      title_(title),
      title_element_(new QCPTextElement(this, title, QFont(font().family(), 10, QFont::Bold))),
      target_line_(new QCPItemStraightLine(this)),
      target_label_(new QCPItemText(this)),
      empty_label_(new QCPItemText(this)) {
    empty_label_->position->setType(QCPItemPosition::ptAxisRectRatio);
    empty_label_->position->setCoords(0.5, 0.5);
    empty_label_->setText(tr("no %1 points").arg(title));
    empty_label_->setColor(QColor(150, 150, 150));
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, title_element_);
    yAxis->setLabel(title);
    xAxis->setLabel(tr("samples"));
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    setNoAntialiasingOnDrag(true);
    legend->setVisible(false);
    // Dragging or zooming freezes the view; a double click fits it to the data again.
    connect(this, &QCustomPlot::mousePress, this, [this] { user_moved_ = true; });
    connect(this, &QCustomPlot::mouseWheel, this, [this] { user_moved_ = true; });
    connect(this, &QCustomPlot::mouseDoubleClick, this, [this] { fit(true); });

    QPen target_pen(QColor(44, 160, 44), 1.5, Qt::DashLine);
    target_line_->setPen(target_pen);
    target_line_->setVisible(false);
    target_label_->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    target_label_->position->setType(QCPItemPosition::ptAxisRectRatio);
    target_label_->setColor(QColor(44, 160, 44));
    target_label_->setVisible(false);
    target_label_->setClipToAxisRect(true);
}

void MetricPlot::set_title(const QString& title) {
    if (title == title_) return;
    title_ = title;
    title_element_->setText(title);
    yAxis->setLabel(title);
    empty_label_->setText(tr("no %1 points").arg(title));
}

void MetricPlot::style(Curve& curve) {
    const bool smoothing = smoothing_ > 0.0;
    QColor faint = curve.color;
    faint.setAlpha(smoothing ? 70 : 255);
    // A dense noisy curve is drawn as a min/max bar per pixel column: a wide antialiased pen makes Qt
    // stroke thousands of short segments as paths (seconds per repaint); a 1-pixel cosmetic pen without
    // antialiasing goes through the fast line rasterizer and looks the same at that density.
    const bool dense = curve.raw->dataCount() > kDensePoints;
    QPen raw_pen(faint, dense ? 1.0 : (smoothing ? 1.0 : 1.6));
    raw_pen.setCosmetic(true);
    curve.raw->setPen(raw_pen);
    curve.raw->setAntialiased(!dense);
    curve.dense = dense;
    curve.smoothed->setPen(QPen(curve.color, 2.0));
    curve.smoothed->setVisible(smoothing && curve.raw->visible());
    curve.smoothed->removeFromLegend();
}

void MetricPlot::add_points(Curve& curve, const std::vector<double>& x, const std::vector<double>& y) {
    QVector<double> keys;
    QVector<double> values;
    QVector<double> smooth_values;
    keys.reserve(static_cast<int>(x.size()));
    values.reserve(static_cast<int>(x.size()));
    smooth_values.reserve(static_cast<int>(x.size()));
    bool sorted = true;
    double last_key = curve.raw->dataCount() > 0 ? (curve.raw->data()->constEnd() - 1)->key : -INFINITY;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
        if (std::isnan(x[i]) || std::isnan(y[i])) continue;
        if (x[i] < last_key) sorted = false;
        last_key = x[i];
        keys.push_back(x[i]);
        values.push_back(y[i]);
        smooth_values.push_back(curve.smoother.push(y[i]));
    }
    // Sorted keys (the usual case) append in O(n); QCustomPlot sorts otherwise.
    curve.raw->addData(keys, values, sorted);
    curve.smoothed->addData(keys, smooth_values, sorted);
    if (!curve.dense && curve.raw->dataCount() > kDensePoints) style(curve);
}

void MetricPlot::set_run(int run_key, const QString& name, const QColor& color, const std::vector<double>& x,
                         const std::vector<double>& y) {
    auto it = curves_.find(run_key);
    if (it == curves_.end()) {
        Curve curve;
        curve.raw = addGraph();
        curve.smoothed = addGraph();
        curve.raw->setAdaptiveSampling(true);
        curve.smoothed->setAdaptiveSampling(true);
        it = curves_.insert(run_key, curve);
    }
    Curve& curve = *it;
    curve.color = color;
    curve.raw->setName(name);
    curve.smoothed->setName(name + tr(" (smoothed)"));
    curve.raw->data()->clear();
    curve.smoothed->data()->clear();
    curve.smoother = EmaSmoother(smoothing_);
    add_points(curve, x, y);
    style(curve);
}

void MetricPlot::append(int run_key, const std::vector<double>& x, const std::vector<double>& y) {
    const auto it = curves_.find(run_key);
    if (it == curves_.end()) return;
    add_points(*it, x, y);
}

void MetricPlot::clear_marks(Curve& curve) {
    for (QCPItemStraightLine* mark : curve.marks)
        removeItem(mark);
    curve.marks.clear();
    curve.mark_x.clear();
}

void MetricPlot::set_run_marks(int run_key, const std::vector<double>& x) {
    const auto it = curves_.find(run_key);
    if (it == curves_.end() || it->mark_x == x) return;
    clear_marks(*it);
    it->mark_x = x;
    QColor color = it->color;
    color.setAlpha(160);
    for (double at : x) {
        if (std::isnan(at)) continue;
        auto* mark = new QCPItemStraightLine(this);
        mark->setPen(QPen(color, 1.2, Qt::DashDotLine));
        mark->point1->setCoords(at, 0);
        mark->point2->setCoords(at, 1);
        mark->setVisible(it->raw->visible());
        it->marks.push_back(mark);
    }
}

QList<QCPItemStraightLine*> MetricPlot::run_marks(int run_key) const {
    const auto it = curves_.find(run_key);
    return it == curves_.end() ? QList<QCPItemStraightLine*>() : it->marks;
}

void MetricPlot::remove_run(int run_key) {
    const auto it = curves_.find(run_key);
    if (it == curves_.end()) return;
    clear_marks(*it);
    removeGraph(it->raw);
    removeGraph(it->smoothed);
    curves_.erase(it);
}

void MetricPlot::set_run_visible(int run_key, bool visible) {
    const auto it = curves_.find(run_key);
    if (it == curves_.end()) return;
    it->raw->setVisible(visible);
    for (QCPItemStraightLine* mark : it->marks)
        mark->setVisible(visible);
    style(*it);
}

void MetricPlot::set_smoothing(double weight) {
    smoothing_ = smoothable_ ? weight : 0.0;
    weight = smoothing_;
    for (Curve& curve : curves_) {
        // Re-smooth from the raw points already held (no re-read of the log).
        curve.smoother = EmaSmoother(weight);
        QSharedPointer<QCPGraphDataContainer> smoothed(new QCPGraphDataContainer);
        QVector<QCPGraphData> points;
        points.reserve(curve.raw->dataCount());
        for (auto p = curve.raw->data()->constBegin(); p != curve.raw->data()->constEnd(); ++p)
            points.push_back(QCPGraphData(p->key, curve.smoother.push(p->value)));
        smoothed->set(points, true);
        curve.smoothed->setData(smoothed);
        style(curve);
    }
}

void MetricPlot::set_log_scale(bool on) {
    if (on) {
        yAxis->setScaleType(QCPAxis::stLogarithmic);
        yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        yAxis->setNumberFormat(QStringLiteral("gb"));
    } else {
        yAxis->setScaleType(QCPAxis::stLinear);
        yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        yAxis->setNumberFormat(QStringLiteral("g"));
    }
    fit(true);
}

void MetricPlot::set_x_title(const QString& title) {
    xAxis->setLabel(title);
}

void MetricPlot::set_target(std::optional<double> target) {
    target_ = target;
    target_line_->setVisible(target.has_value());
    target_label_->setVisible(target.has_value());
    if (!target) return;
    target_line_->point1->setCoords(0, *target);
    target_line_->point2->setCoords(1, *target);
    target_label_->setText(tr("target %1").arg(*target));
    target_label_->position->setType(QCPItemPosition::ptPlotCoords);
    target_label_->position->setCoords(xAxis->range().upper, *target);
}

void MetricPlot::show_legend_below() {
    legend->setVisible(true);
    if (axisRect()->insetLayout()->take(legend)) axisRect()->insetLayout()->simplify();
    const int row = plotLayout()->rowCount();
    plotLayout()->addElement(row, 0, legend);
    plotLayout()->setRowStretchFactor(row, 0.001);  // as tall as its entries, the rest for the plot
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(3);
    legend->setMargins(QMargins(4, 2, 4, 2));
    legend->setBorderPen(Qt::NoPen);
}

void MetricPlot::fit(bool force) {
    if (force) user_moved_ = false;
    if (user_moved_) return;
    // The ranges come from the data alone: QCustomPlot's rescaleAxes keeps the axis's current size around
    // a flat curve, so padding that again on every fit grew the axis without end (-4000 to 2000 for scores).
    const bool log_y = yAxis->scaleType() == QCPAxis::stLogarithmic;
    bool any = false;
    QCPRange x;
    QCPRange y;
    for (const Curve& curve : curves_) {
        if (!curve.raw->visible() || curve.raw->dataCount() == 0) continue;
        bool found_x = false;
        bool found_y = false;
        const QCPRange curve_x = curve.raw->getKeyRange(found_x);
        const QCPRange curve_y = curve.raw->getValueRange(found_y, log_y ? QCP::sdPositive : QCP::sdBoth);
        if (!found_x || !found_y) continue;
        x = any ? QCPRange(std::min(x.lower, curve_x.lower), std::max(x.upper, curve_x.upper)) : curve_x;
        y = any ? QCPRange(std::min(y.lower, curve_y.lower), std::max(y.upper, curve_y.upper)) : curve_y;
        any = true;
    }
    empty_label_->setVisible(!any);
    if (!any) return;
    const double x_pad = x.size() > 0 ? 0.0 : std::max(std::fabs(x.center()) * 0.05, 0.5);
    xAxis->setRange(x.lower - x_pad, x.upper + x_pad);
    if (target_) y.expand(*target_);
    if (y_span_) y.expand(*y_span_);
    const double pad = y.size() > 0 ? y.size() * 0.05 : std::max(std::fabs(y.center()) * 0.05, 1e-9);
    if (log_y) {
        yAxis->setRange(y.lower / 1.2, y.upper * 1.2);
    } else {
        yAxis->setRange(y.lower - pad, y.upper + pad);
    }
    if (target_) target_label_->position->setCoords(xAxis->range().upper, *target_);
}

QCPGraph* MetricPlot::raw_graph(int run_key) const {
    const auto it = curves_.find(run_key);
    return it == curves_.end() ? nullptr : it->raw;
}

QCPGraph* MetricPlot::smoothed_graph(int run_key) const {
    const auto it = curves_.find(run_key);
    return it == curves_.end() ? nullptr : it->smoothed;
}

}  // namespace slipway::app
