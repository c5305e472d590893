// MonitorWidget: run list, four metric plots, controls, status line and raw log, drawn from the run
// tracker's signals (a run added, a batch folded in, a state changed, a run released). The plot side is in
// monitor_widget_plot.cpp, the raw log's whole-file search in monitor_widget_search.cpp.
#include "monitor/monitor_widget.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QGridLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>
#include <QtDebug>

#include <cmath>

#include "core/run_state_display.h"
#include "monitor/metric_plot.h"
#include "runs/runs_model.h"

namespace slipway::app {
namespace {

QString duration_text(int64_t ms) {
    const int64_t s = ms / 1000;
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600)
        .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
}

// The run list's rows: the runs model's tracked rows, in the order they were added (the legend's order), and
// of its columns the name (with the check box, the swatch and the tooltip).
class TrackedRunsFilter : public QSortFilterProxyModel {
public:
    explicit TrackedRunsFilter(RunsModel* runs, QObject* parent) : QSortFilterProxyModel(parent) {
        setSourceModel(runs);
        setSortRole(RunsModel::kTrackedOrderRole);
        sort(0);  // its one column
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
        return sourceModel()->index(row, 0, parent).data(RunsModel::kTrackerKeyRole).toInt() != 0;
    }
    bool filterAcceptsColumn(int column, const QModelIndex&) const override {
        return column == RunsModel::kNameColumn;
    }
};

}  // namespace

MonitorWidget::MonitorWidget(RunTracker* tracker, RunsModel* runs, QWidget* parent)
    : QWidget(parent), tracker_(tracker), runs_model_(runs) {
    // Controls row.
    x_axis_box_ = new QComboBox(this);
    for (XAxis axis : {XAxis::kSamples, XAxis::kSteps, XAxis::kWallTime})
        x_axis_box_->addItem(tr(x_axis_title(axis)), static_cast<int>(axis));
    x_axis_box_->setToolTip(tr("What the curves are drawn against"));
    smoothing_slider_ = new QSlider(Qt::Horizontal, this);
    smoothing_slider_->setRange(0, 99);
    smoothing_slider_->setFixedWidth(140);
    smoothing_slider_->setToolTip(tr("Exponential moving average weight; the raw curve stays faint behind"));
    smoothing_label_ = new QLabel(this);
    smoothing_label_->setMinimumWidth(32);
    log_scale_box_ = new QCheckBox(tr("Log scale"), this);
    auto* png_button = new QPushButton(tr("Export PNG..."), this);
    auto* csv_button = new QPushButton(tr("Export CSV..."), this);
    png_button->setObjectName(QStringLiteral("export_png"));
    csv_button->setObjectName(QStringLiteral("export_csv"));
    cancel_button_ = new QPushButton(tr("Cancel run"), this);
    cancel_button_->setEnabled(false);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("X axis:"), this));
    controls->addWidget(x_axis_box_);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("Smoothing:"), this));
    controls->addWidget(smoothing_slider_);
    controls->addWidget(smoothing_label_);
    controls->addWidget(log_scale_box_);
    controls->addStretch(1);
    controls->addWidget(png_button);
    controls->addWidget(csv_button);
    controls->addWidget(cancel_button_);

    // Plots: 2 x 2.
    plot_grid_ = new QWidget(this);
    auto* grid = new QGridLayout(plot_grid_);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(4);
    for (Metric m : kAllMetrics) {
        auto* p = new MetricPlot(tr(metric_title(m)), plot_grid_);
        p->setMinimumSize(200, 150);
        p->set_smoothable(m != Metric::kEvalAccuracy);
        plots_[static_cast<size_t>(m)] = p;
        const int i = static_cast<int>(m);
        grid->addWidget(p, i / 2, i % 2);
    }
    for (TaskFamily family : {TaskFamily::kScore, TaskFamily::kPerplexity}) {
        const bool scores = family == TaskFamily::kScore;
        auto* tasks =
            new MetricPlot(scores ? tr("eval task scores") : tr("eval task perplexity and NLL"), plot_grid_);
        tasks->setMinimumSize(200, 150);
        tasks->set_smoothable(false);  // each point is one evaluation
        tasks->show_legend_below();
        if (scores)
            tasks->set_y_span(0.0, 1.0);  // accuracies read against the whole scale
        else
            tasks->set_log_scale(true);  // perplexity in the hundreds and NLL in nats
        tasks->setVisible(false);        // until a run has eval_task points of this family
        plots_[kMetricCount + static_cast<size_t>(family)] = tasks;
        grid->addWidget(tasks, static_cast<int>(family), 2);
    }

    // Runs (the legend: check to overlay, select for the status line and log).
    if (runs_model_ == nullptr) runs_model_ = new RunsModel(nullptr, tracker_, this);
    run_list_rows_ = new TrackedRunsFilter(runs_model_, this);
    run_list_ = new QListView(this);
    run_list_->setModel(run_list_rows_);
    run_list_->setMaximumWidth(220);
    run_list_->setToolTip(tr("Checked runs are overlaid; the selected one drives the status line and log"));
    run_list_->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto* remove_action = new QAction(tr("Remove from the monitor"), run_list_);
    remove_action->setShortcut(QKeySequence::Delete);
    remove_action->setShortcutContext(Qt::WidgetShortcut);
    run_list_->addAction(remove_action);
    connect(remove_action, &QAction::triggered, this, [this] {
        if (const int key = key_at(run_list_->currentIndex())) remove_run(key);
    });

    // Status and log.
    status_label_ = new QLabel(tr("No run. File > Open log... or submit a run."), this);
    status_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    log_view_ = new QPlainTextEdit(this);
    log_view_->setReadOnly(true);
    log_view_->setMaximumBlockCount(kMaxLogLines);
    log_view_->setLineWrapMode(QPlainTextEdit::NoWrap);
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::Monospace);
    mono.setPointSize(9);
    log_view_->setFont(mono);
    search_box_ = new QLineEdit(this);
    search_box_->setPlaceholderText(tr("Search the log (Enter: next, Shift+Enter: previous)"));
    search_box_->setClearButtonEnabled(true);
    search_result_ = new QLabel(this);
    auto* search_row = new QHBoxLayout;
    search_row->addWidget(search_box_, 1);
    search_row->addWidget(search_result_);
    auto* log_panel = new QWidget(this);
    auto* log_layout = new QVBoxLayout(log_panel);
    log_layout->setContentsMargins(0, 0, 0, 0);
    log_layout->addLayout(search_row);
    log_layout->addWidget(log_view_);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(plot_grid_);
    splitter->addWidget(log_panel);
    splitter->setStretchFactor(0, 4);
    splitter->setStretchFactor(1, 1);
    auto* right = new QWidget(this);
    auto* right_layout = new QVBoxLayout(right);
    right_layout->setContentsMargins(0, 0, 0, 0);
    right_layout->addLayout(controls);
    right_layout->addWidget(status_label_);
    right_layout->addWidget(splitter, 1);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(run_list_);
    layout->addWidget(right, 1);

    connect(x_axis_box_, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this](int i) { set_x_axis(static_cast<XAxis>(x_axis_box_->itemData(i).toInt())); });
    connect(smoothing_slider_, &QSlider::valueChanged, this, [this](int v) { set_smoothing(v / 100.0); });
    connect(log_scale_box_, &QCheckBox::toggled, this, &MonitorWidget::set_log_scale);
    connect(cancel_button_, &QPushButton::clicked, this, [this] {
        if (current_ != 0) emit cancel_requested(current_);
    });
    connect(png_button, &QPushButton::clicked, this, [this] { emit export_requested(true); });
    connect(csv_button, &QPushButton::clicked, this, [this] { emit export_requested(false); });
    connect(run_list_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
                if (const int key = key_at(current)) set_current_run(key);
            });
    connect(runs_model_, &RunsModel::shown_changed, this, [this](int key, bool shown) {
        for (MetricPlot* p : plots_) {
            p->set_run_visible(key, shown);
            p->fit();
        }
        refresh_task_curves(key);
        update_target_line();
    });
    connect(search_box_, &QLineEdit::returnPressed, this, [this] {
        const bool backward = QGuiApplication::keyboardModifiers() & Qt::ShiftModifier;
        if (find_in_log(search_box_->text(), backward))
            search_result_->clear();
        else if (!log_search_pending_)
            search_result_->setText(tr("not found"));
    });
    connect(search_box_, &QLineEdit::textChanged, this, [this](const QString& text) {
        if (text.isEmpty() && file_window_line_ >= 0) refresh_log_view();  // cleared: the log's end again
    });
    connect(tracker_, &RunTracker::run_added, this, &MonitorWidget::on_run_added);
    connect(tracker_, &RunTracker::batch_applied, this, &MonitorWidget::on_batch_applied);
    connect(tracker_, &RunTracker::run_changed, this, [this](int key) {
        if (key == current_) update_status();
        if (key == current_) update_target_line();
    });
    connect(tracker_, &RunTracker::run_released, this, &MonitorWidget::on_run_released);
    connect(tracker_, &RunTracker::history_problem, this, &MonitorWidget::note_history);
    for (int key : tracker_->keys())
        on_run_added(key);  // runs the tracker had before the view
    set_smoothing(0.0);
}

void MonitorWidget::on_run_added(int key) {
    const TrackedRun* run = tracker_->run(key);
    if (run == nullptr || views_.count(key) != 0) return;
    MonitorView& view = views_[key];
    view.key = key;
    view.color = RunsModel::color_of(key);
    runs_model_->track(key);  // the model hears run_added too; this one is not left to connection order
    replot_run(key);
    run_list_->setCurrentIndex(list_row_of(key));
    update_target_line();
    update_status();
}

void MonitorWidget::set_run_visible(int key, bool visible) {
    runs_model_->set_shown(key, visible);
}

void MonitorWidget::remove_run(int key) {
    tracker_->release(key);  // run_released removes it here
}

void MonitorWidget::on_run_released(int key) {
    const auto it = views_.find(key);
    if (it == views_.end()) return;
    for (MetricPlot* p : plots_)
        p->remove_run(key);
    remove_task_curves(key);
    views_.erase(it);
    const bool was_current = current_ == key;
    if (was_current) current_ = 0;
    // The model drops the row (run_released), and the list moves its current row to a neighbour: that run
    // becomes current.
    if (was_current && current_ == 0) {
        if (const int next = key_at(run_list_->currentIndex()); next != key) set_current_run(next);
    }
    update_target_line();
    update_status();
    refresh_log_view();
    schedule_replot();
}

void MonitorWidget::clear() {
    while (!views_.empty())
        remove_run(views_.begin()->first);
}

void MonitorWidget::set_current_run(int key) {
    if (views_.count(key) == 0 || key == current_) return;
    current_ = key;
    if (const QModelIndex row = list_row_of(key); run_list_->currentIndex() != row)
        run_list_->setCurrentIndex(row);
    update_target_line();
    update_status();
    refresh_log_view();
    schedule_replot();
}

const TrackedRun* MonitorWidget::run(int key) const {
    return views_.count(key) != 0 ? tracker_->run(key) : nullptr;
}

const MonitorView* MonitorWidget::view(int key) const {
    const auto it = views_.find(key);
    return it == views_.end() ? nullptr : &it->second;
}

std::vector<int> MonitorWidget::run_keys() const {
    std::vector<int> keys;
    for (const auto& [key, view] : views_)
        keys.push_back(key);
    return keys;
}

int MonitorWidget::key_at(const QModelIndex& list_row) const {
    return list_row.isValid() ? list_row.data(RunsModel::kTrackerKeyRole).toInt() : 0;
}

QModelIndex MonitorWidget::list_row_of(int key) const {
    const int row = runs_model_->row_of_tracked(key);
    return row < 0 ? QModelIndex()
                   : run_list_rows_->mapFromSource(runs_model_->index(row, RunsModel::kNameColumn));
}

void MonitorWidget::on_batch_applied(int key, const FollowBatch& batch,
                                     const std::array<size_t, kMetricCount>& first_new) {
    const auto it = views_.find(key);
    const TrackedRun* run = tracker_->run(key);
    if (it == views_.end() || run == nullptr) return;
    MonitorView& view = it->second;
    if (!batch.error.isEmpty()) {
        view.lines.push_back(tr("[slipway] %1").arg(batch.error));
        if (key == current_) log_view_->appendPlainText(view.lines.back());
    }
    if (batch.reset) {
        view.lines.clear();  // the log was rewritten (a restarted job): its old curves are gone too
        replot_run(key);
    } else {
        append_points(key, first_new);
    }
    update_target_line();
    view.lines_not_sent += batch.lines_skipped;
    if (batch.lines_skipped > 0) {
        view.lines.push_back(tr("[slipway] ... %1 lines not shown ...").arg(batch.lines_skipped));
    }
    for (const QString& line : batch.lines)
        view.lines.push_back(line);
    while (view.lines.size() > static_cast<size_t>(kMaxLogLines)) {
        view.lines.pop_front();
        ++view.lines_dropped;
    }
    // A file being read shows its log once at the end (appending thousands of lines per batch to the
    // view costs more than parsing them); live runs show every batch.
    // An older part of the log found by a search stays shown until the search is cleared.
    const bool showing_end = file_window_line_ < 0;
    if (key == current_ && showing_end) {
        if (run->loading) {
            // shown when read
        } else if (batch.reset || (batch.finished && run->source == RunKind::kLogFile && !run->live)) {
            refresh_log_view();
        } else if (!batch.lines.isEmpty() || batch.lines_skipped > 0) {
            QStringList shown = batch.lines;
            if (batch.lines_skipped > 0)
                shown.prepend(view.lines[view.lines.size() - batch.lines.size() - 1]);
            log_view_->appendPlainText(shown.join(QLatin1Char('\n')));
            log_view_->horizontalScrollBar()->setValue(0);
        }
    }
    if (key == current_) update_status();
}

QString MonitorWidget::status_text() const {
    return status_label_->text();
}

void MonitorWidget::update_status() {
    const TrackedRun* r = run(current_);
    cancel_button_->setEnabled(r != nullptr && r->cancellable);
    if (r == nullptr) {
        status_label_->setText(tr("No run. File > Open log... or submit a run."));
        return;
    }
    const RunMetrics& m = r->metrics;
    QStringList parts;
    const QString detail = QString::fromStdString(r->state_detail);
    parts << QStringLiteral("<b>%1</b>").arg(QString::fromStdString(r->name).toHtmlEscaped())
          << (detail.isEmpty()
                  ? display_text(r->state)
                  : tr("%1 (%2)").arg(display_text(r->state), display_detail(detail).toHtmlEscaped()));
    if (m.status) parts << tr("run_stop: %1").arg(QString::fromStdString(*m.status));
    if (!m.resumes.empty()) parts << tr("restarts: %1").arg(m.resumes.size());
    if (m.nodes.size() > 1)
        parts << tr("nodes: %1").arg(QString::fromStdString(describe_node_ranks(m.nodes)).toHtmlEscaped());
    // Each node's Slurm state while the job runs (the tracker clears them at its end), with the node's
    // heartbeat step beside it while it trains; without states, the heartbeat steps alone (which node is
    // behind).
    if (!r->node_states.empty()) {
        const std::vector<NodeStep> steps = m.run_stop_ms ? std::vector<NodeStep>{} : m.node_steps;
        parts << tr("node states: %1")
                     .arg(QString::fromStdString(remote::describe_node_states(r->node_states, steps))
                              .toHtmlEscaped());
    } else if (!m.node_steps.empty() && !m.run_stop_ms) {
        parts << tr("heartbeats: %1")
                     .arg(QString::fromStdString(describe_node_steps(m.node_steps)).toHtmlEscaped());
    }
    if (!m.lost_nodes.empty()) {
        QStringList lost;
        for (const std::string& node : m.lost_nodes)
            lost << QString::fromStdString(node).toHtmlEscaped();
        parts << tr("lost: %1").arg(lost.join(QStringLiteral(", ")));
    }
    if (const auto elapsed = m.elapsed_ms()) parts << tr("elapsed %1").arg(duration_text(*elapsed));
    if (m.last_step) {
        parts << (m.total_steps ? tr("step %1 / %2").arg(*m.last_step).arg(*m.total_steps)
                                : tr("step %1").arg(*m.last_step));
    }
    if (const auto eta = m.eta_ms(); eta && !m.run_stop_ms) parts << tr("ETA %1").arg(duration_text(*eta));
    const auto& loss = m.points(Metric::kTrainLoss);
    if (!loss.empty()) parts << tr("train_loss %1").arg(loss.back().value, 0, 'g', 5);
    const auto& eval = m.points(Metric::kEvalAccuracy);
    if (!eval.empty()) {
        QString text =
            QStringLiteral("%1 %2").arg(tr(eval_title(m.eval_meaning))).arg(eval.back().value, 0, 'g', 5);
        if (m.target) text += tr(" (target %1)").arg(*m.target);
        parts << text;
    }
    parts << tr("%1 points").arg(m.total_points());
    if (r->loading) parts << tr("reading...");
    if (r->store_id != 0 && tracker_->store_failing())
        parts << tr("<span style=\"color:#c62828\">history not written, retrying</span>");
    status_label_->setText(parts.join(QStringLiteral(" &middot; ")));
}

void MonitorWidget::refresh_log_view() {
    file_window_line_ = -1;  // back to the run's last lines
    const MonitorView* r = view(current_);
    QStringList lines;
    if (r != nullptr) {
        if (r->lines_dropped > 0)
            lines << tr("[slipway] ... %1 earlier lines not kept ...").arg(r->lines_dropped);
        for (const QString& line : r->lines)
            lines << line;
    }
    log_view_->setPlainText(lines.join(QLatin1Char('\n')));
    log_view_->moveCursor(QTextCursor::End);
    // Moving the cursor to the end scrolls right to the last line's end; show line starts instead, once
    // the view has laid the text out.
    QTimer::singleShot(0, log_view_, [view = log_view_] { view->horizontalScrollBar()->setValue(0); });
}

void MonitorWidget::note_history(const QString& message) {
    const QString line = tr("[slipway] history: %1").arg(message);
    for (auto& [key, view] : views_) {
        const TrackedRun* r = tracker_->run(key);
        if (r == nullptr || r->store_id == 0) continue;
        view.lines.push_back(line);
        if (key == current_ && file_window_line_ < 0) log_view_->appendPlainText(line);
    }
    update_status();
}

}  // namespace slipway::app
