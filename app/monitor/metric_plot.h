// One metric's plot in the monitor (QCustomPlot): per run a raw curve and its EMA-smoothed curve (the raw
// one drawn faint behind it while smoothing is on) and a vertical mark where a restarted job resumed, an
// optional horizontal target line, linear or log y.
// Every point is handed to QCustomPlot; its adaptive sampling draws a dense curve as the min/max of the
// points in each pixel column, so zooming in shows the real points and nothing is dropped.
#pragma once

#include <QColor>
#include <QHash>
#include <QString>

#include <optional>
#include <vector>

#include <qcustomplot.h>

#include "monitor/smoothing.h"

namespace slipway::app {

class MetricPlot : public QCustomPlot {
    Q_OBJECT

public:
    explicit MetricPlot(const QString& title, QWidget* parent = nullptr);

    // Replaces the curves of run `run_key` (x sorted or not; NaN x or y are skipped).
    void set_run(int run_key, const QString& name, const QColor& color, const std::vector<double>& x,
                 const std::vector<double>& y);
    // Appends points that arrived live.
    void append(int run_key, const std::vector<double>& x, const std::vector<double>& y);
    // The x where run `run_key` resumed after a restart (its segments), each a dashed vertical line in the
    // run's colour; NaN x (the axis cannot place it) are left out.
    void set_run_marks(int run_key, const std::vector<double>& x);
    void remove_run(int run_key);
    void set_run_visible(int run_key, bool visible);

    void set_smoothing(double weight);  // [0, 1): re-smooths every curve
    // Sparse curves (eval_accuracy: a few evaluations) are never smoothed: each point is a measurement,
    // and an average would move the moment the target is crossed.
    void set_smoothable(bool on) { smoothable_ = on; }
    void set_log_scale(bool on);
    void set_x_title(const QString& title);
    void set_target(std::optional<double> target);
    // The y axis always shows at least [lower, upper] (scores against their whole scale).
    void set_y_span(double lower, double upper) { y_span_ = QCPRange(lower, upper); }
    // The legend in a row under the plot, its entries side by side, so it never covers a curve.
    void show_legend_below();
    // Fits the axes to the visible curves (and the target) unless the user zoomed or panned.
    void fit(bool force = false);

    QCPGraph* raw_graph(int run_key) const;
    QCPGraph* smoothed_graph(int run_key) const;
    QList<QCPItemStraightLine*> run_marks(int run_key) const;
    QCPItemStraightLine* target_line() const { return target_line_; }
    std::optional<double> target() const { return target_; }
    double smoothing() const { return smoothing_; }
    QString title() const { return title_; }
    // Renames the plot (its title, y axis and "no points" text): what is plotted can change with the runs.
    void set_title(const QString& title);

private:
    static constexpr int kDensePoints = 5000;  // above this a curve is drawn with thin, plain pens

    struct Curve {
        bool dense = false;
        QCPGraph* raw = nullptr;
        QCPGraph* smoothed = nullptr;
        QColor color;
        EmaSmoother smoother;
        std::vector<double> mark_x;
        QList<QCPItemStraightLine*> marks;
    };
    void style(Curve& curve);
    void add_points(Curve& curve, const std::vector<double>& x, const std::vector<double>& y);
    void clear_marks(Curve& curve);

    QString title_;
    QCPTextElement* title_element_;
    QHash<int, Curve> curves_;
    double smoothing_ = 0.0;
    bool smoothable_ = true;
    bool user_moved_ = false;
    std::optional<double> target_;
    std::optional<QCPRange> y_span_;
    QCPItemStraightLine* target_line_;
    QCPItemText* target_label_;
    QCPItemText* empty_label_;  // "no points" while nothing visible has data
};

}  // namespace slipway::app
