// MonitorWidget, the plot side: appending new points to the four metric plots and the eval_task plot,
// replotting a run, the target line, the x axis, smoothing, log scale, coalesced replots, and PNG/CSV export
// of what is shown.
#include <QComboBox>
#include <QFile>
#include <QGridLayout>
#include <QLabel>
#include <QSlider>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "contract/file_system.h"
#include "contract/mllog_keys.h"
#include "monitor/metric_plot.h"
#include "monitor/monitor_widget.h"
#include "monitor/series_csv.h"
#include "monitor/smoothing.h"
#include "runs/runs_model.h"

namespace slipway::app {

void MonitorWidget::append_points(int key, const std::array<size_t, kMetricCount>& first_new) {
    const TrackedRun* found = tracker_->run(key);
    if (found == nullptr) return;
    const TrackedRun& run = *found;
    for (Metric m : kAllMetrics) {
        const std::vector<MetricSample>& points = run.metrics.points(m);
        const size_t first = first_new[static_cast<size_t>(m)];
        if (first >= points.size()) continue;
        std::vector<double> x;
        std::vector<double> y;
        x.reserve(points.size() - first);
        y.reserve(points.size() - first);
        for (size_t i = first; i < points.size(); ++i) {
            x.push_back(run.metrics.x_of(points[i], x_axis_));
            y.push_back(points[i].value);
        }
        plot(m)->append(run.key, x, y);
    }
    mark_resumes(run);
    refresh_task_curves(key);
    schedule_replot();
}

void MonitorWidget::replot_run(int key) {
    const TrackedRun* found = tracker_->run(key);
    const MonitorView* view = this->view(key);
    if (found == nullptr || view == nullptr) return;
    const TrackedRun& run = *found;
    for (Metric m : kAllMetrics) {
        const std::vector<MetricSample>& points = run.metrics.points(m);
        std::vector<double> x;
        std::vector<double> y;
        x.reserve(points.size());
        y.reserve(points.size());
        for (const MetricSample& p : points) {
            x.push_back(run.metrics.x_of(p, x_axis_));
            y.push_back(p.value);
        }
        plot(m)->set_run(run.key, QString::fromStdString(run.name), view->color, x, y);
        plot(m)->set_run_visible(run.key, runs_model_->is_shown(run.key));
        plot(m)->fit();
    }
    mark_resumes(run);
    refresh_task_curves(key);
    schedule_replot();
}

void MonitorWidget::mark_resumes(const TrackedRun& run) {
    std::vector<double> x;
    for (const MetricSample& resume : run.metrics.resumes)
        x.push_back(run.metrics.x_of(resume, x_axis_));
    for (Metric m : kAllMetrics)
        plot(m)->set_run_marks(run.key, x);
}

void MonitorWidget::refresh_task_curves(int key) {
    const TrackedRun* run = tracker_->run(key);
    const MonitorView* view = this->view(key);
    if (run == nullptr || view == nullptr) return;
    const std::vector<TaskSeries>& all = run->metrics.task_series;
    // Curves of series the log no longer has (a rewritten log) go first.
    for (auto it = task_curves_.begin(); it != task_curves_.end();) {
        const bool stale = it->first.first == key &&
                           std::none_of(all.begin(), all.end(),
                                        [&it](const TaskSeries& s) { return s.name == it->first.second; });
        if (stale) {
            task_plot(task_family(it->first.second))->remove_run(it->second);
            it = task_curves_.erase(it);
        } else {
            ++it;
        }
    }
    const bool shown = runs_model_->is_shown(key);
    for (size_t i = 0; i < all.size(); ++i) {
        int& curve = task_curves_[{key, all[i].name}];
        if (curve == 0)
            curve = -(next_task_curve_++);  // negative: never a run key, which the other plots use
        std::vector<double> x;
        std::vector<double> y;
        for (const MetricSample& p : all[i].points) {
            x.push_back(run->metrics.x_of(p, x_axis_));
            y.push_back(p.value);
        }
        // The run's colour turned around the hue wheel: one run's series stay near its colour.
        const QColor color = QColor::fromHsv((view->color.hsvHue() + 47 * static_cast<int>(i)) % 360,
                                             view->color.hsvSaturation(), view->color.value());
        const QString series = QString::fromStdString(all[i].name);
        MetricPlot* plot = task_plot(task_family(all[i].name));
        plot->set_run(
            curve,
            views_.size() > 1 ? QString::fromStdString(run->name) + QStringLiteral(": ") + series : series,
            color, x, y);
        plot->set_run_visible(curve, shown);
    }
    show_task_plots();
}

void MonitorWidget::show_task_plots() {
    std::array<bool, kTaskFamilyCount> any{};
    for (const auto& [series, curve] : task_curves_) {
        if (runs_model_->is_shown(series.first)) any[static_cast<size_t>(task_family(series.second))] = true;
    }
    for (TaskFamily family : {TaskFamily::kScore, TaskFamily::kPerplexity}) {
        task_plot(family)->setVisible(any[static_cast<size_t>(family)]);
        task_plot(family)->fit();
    }
}

void MonitorWidget::remove_task_curves(int key) {
    for (auto it = task_curves_.begin(); it != task_curves_.end();) {
        if (it->first.first == key) {
            task_plot(task_family(it->first.second))->remove_run(it->second);
            it = task_curves_.erase(it);
        } else {
            ++it;
        }
    }
    show_task_plots();
}

QCPGraph* MonitorWidget::task_graph(int key, const std::string& series) const {
    const auto it = task_curves_.find({key, series});
    return it == task_curves_.end() ? nullptr : task_plot(task_family(series))->raw_graph(it->second);
}

void MonitorWidget::update_target_line() {
    // The target of the selected run, else of the first shown run that has one; hidden runs lend none.
    auto shown = [this](int key) { return runs_model_->is_shown(key); };
    std::optional<double> target;
    if (const TrackedRun* r = run(current_); r != nullptr && shown(current_)) target = r->metrics.target;
    for (const auto& [key, view] : views_) {
        if (target) break;
        if (const TrackedRun* r = run(key); r != nullptr && shown(key)) target = r->metrics.target;
    }
    plot(Metric::kEvalAccuracy)->set_target(target);
    plot(Metric::kEvalAccuracy)->fit();
    update_eval_title();
    schedule_replot();
}

void MonitorWidget::update_eval_title() {
    std::set<EvalMeaning> shown;
    for (const auto& [key, view] : views_) {
        const TrackedRun* r = run(key);
        if (r == nullptr || !runs_model_->is_shown(key)) continue;
        if (!r->metrics.points(Metric::kEvalAccuracy).empty()) shown.insert(r->metrics.eval_meaning);
    }
    QString title = tr(eval_title(shown.size() == 1 ? *shown.begin() : EvalMeaning::kUnknown));
    // Runs that disagree: the key's name, and a warning that the curves are not comparable.
    if (shown.size() > 1) title = tr("eval_accuracy (loss and accuracy mixed)");
    plot(Metric::kEvalAccuracy)->set_title(title);
}

void MonitorWidget::set_x_axis(XAxis axis) {
    x_axis_ = axis;
    if (x_axis_box_->currentData().toInt() != static_cast<int>(axis)) {
        x_axis_box_->setCurrentIndex(x_axis_box_->findData(static_cast<int>(axis)));
    }
    for (MetricPlot* p : plots_) {
        p->set_x_title(tr(x_axis_title(axis)));
        p->fit(true);
    }
    for (const auto& [key, view] : views_)
        replot_run(key);
    update_target_line();
}

void MonitorWidget::set_smoothing(double weight) {
    weight = std::clamp(weight, 0.0, 0.99);
    const int slider = static_cast<int>(std::lround(weight * 100));
    if (smoothing_slider_->value() != slider) smoothing_slider_->setValue(slider);
    smoothing_label_->setText(QString::number(weight, 'f', 2));
    for (MetricPlot* p : plots_)
        p->set_smoothing(weight);
    schedule_replot();
}

void MonitorWidget::set_log_scale(bool on) {
    if (log_scale_box_->isChecked() != on) log_scale_box_->setChecked(on);
    // Learning rate and throughput stay linear: a log loss axis is what shows late-training progress.
    plot(Metric::kTrainLoss)->set_log_scale(on);
    plot(Metric::kEvalAccuracy)->set_log_scale(on);
    schedule_replot();
}

void MonitorWidget::schedule_replot() {
    // Many batches in one event-loop turn cost one repaint.
    if (replot_pending_) return;
    replot_pending_ = true;
    QTimer::singleShot(0, this, [this] {
        replot_pending_ = false;
        // Fitting scans every point for the value range: once per repaint, not once per batch.
        for (MetricPlot* p : plots_) {
            p->fit();
            p->replot(QCustomPlot::rpQueuedReplot);
        }
    });
}

Status MonitorWidget::export_png(const QString& path) const {
    for (MetricPlot* p : plots_)
        p->replot(QCustomPlot::rpImmediateRefresh);
    const QPixmap image = plot_grid_->grab();
    if (image.isNull() || !image.save(path, "PNG")) {
        return Status::Error("cannot write PNG " + path.toStdString());
    }
    return Status::Ok();
}

Status MonitorWidget::export_csv(const QString& path) const {
    std::vector<ShownSeries> shown;
    for (const auto& [key, view] : views_) {
        if (!runs_model_->is_shown(key)) continue;
        const TrackedRun* found = run(key);
        if (found == nullptr) continue;
        const TrackedRun& r = *found;
        for (Metric m : kAllMetrics) {
            ShownSeries s;
            s.run = r.name;
            s.metric = metric_key(m);
            s.x_name = x_axis_title(x_axis_);
            for (const MetricSample& p : r.metrics.points(m)) {
                const double x = r.metrics.x_of(p, x_axis_);
                if (std::isnan(x)) continue;
                s.x.push_back(x);
                s.y.push_back(p.value);
            }
            if (s.y.empty()) continue;
            const double weight = plot(m)->smoothing();  // 0 for eval_accuracy
            if (weight > 0) s.smoothed = ema_smooth(s.y, weight);
            shown.push_back(std::move(s));
        }
        for (const TaskSeries& series : r.metrics.task_series) {  // the task plot's curves: never smoothed
            ShownSeries s;
            s.run = r.name;
            s.metric = std::string(mllog_key::kEvalTask) + ":" + series.name;
            s.x_name = x_axis_title(x_axis_);
            for (const MetricSample& p : series.points) {
                const double x = r.metrics.x_of(p, x_axis_);
                if (std::isnan(x)) continue;
                s.x.push_back(x);
                s.y.push_back(p.value);
            }
            if (!s.y.empty()) shown.push_back(std::move(s));
        }
    }
    std::ostringstream csv;
    write_series_csv(csv, shown);
    return write_file_atomically(QFile::encodeName(path).toStdString(), csv.str());
}

}  // namespace slipway::app
