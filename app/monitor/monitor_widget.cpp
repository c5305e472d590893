// MonitorWidget: run list, four metric plots, controls, status line and raw log; batches from the
// follow service are folded into RunMetrics, stored in the history and appended to the plots. The plot
// side is in monitor_widget_plot.cpp, the raw log's whole-file search in monitor_widget_search.cpp.
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
#include <QListWidget>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSlider>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>
#include <QtDebug>

#include <cmath>

#include "history/history_writer.h"
#include "history/run_history.h"
#include "monitor/metric_plot.h"

namespace slipway::app {
namespace {

// Matplotlib's tab10: distinct on white, in the order people know from other plots.
const QColor kPalette[] = {QColor(31, 119, 180),  QColor(255, 127, 14),  QColor(44, 160, 44),
                           QColor(214, 39, 40),   QColor(148, 103, 189), QColor(140, 86, 75),
                           QColor(227, 119, 194), QColor(127, 127, 127), QColor(188, 189, 34),
                           QColor(23, 190, 207)};

QString duration_text(int64_t ms) {
    const int64_t s = ms / 1000;
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600)
        .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
}

int64_t now_ms() {
    return QDateTime::currentMSecsSinceEpoch();
}

}  // namespace

MonitorWidget::MonitorWidget(FollowService* follow, RunHistory* history, QWidget* parent)
    : QWidget(parent), follow_(follow), history_(history) {
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

    // Runs (the legend: check to overlay, select for the status line and log).
    run_list_ = new QListWidget(this);
    run_list_->setMaximumWidth(220);
    run_list_->setToolTip(tr("Checked runs are overlaid; the selected one drives the status line and log"));
    run_list_->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto* remove_action = new QAction(tr("Remove from the monitor"), run_list_);
    remove_action->setShortcut(QKeySequence::Delete);
    remove_action->setShortcutContext(Qt::WidgetShortcut);
    run_list_->addAction(remove_action);
    connect(remove_action, &QAction::triggered, this, [this] {
        if (QListWidgetItem* item = run_list_->currentItem()) remove_run(item->data(Qt::UserRole).toInt());
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
    connect(run_list_, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
        if (item != nullptr) set_current_run(item->data(Qt::UserRole).toInt());
    });
    connect(run_list_, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
        const int key = item->data(Qt::UserRole).toInt();
        for (MetricPlot* p : plots_) {
            p->set_run_visible(key, item->checkState() == Qt::Checked);
            p->fit();
        }
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
    connect(follow_, &FollowService::batch, this, &MonitorWidget::on_batch);
    if (history_ != nullptr) {
        writer_ = &history_->writer();
        connect(writer_, &HistoryWriter::write_failed, this, &MonitorWidget::note_history);
        connect(writer_, &HistoryWriter::write_recovered, this, &MonitorWidget::note_history);
    }

    stall_timer_ = new QTimer(this);
    stall_timer_->setInterval(5000);
    connect(stall_timer_, &QTimer::timeout, this, &MonitorWidget::check_stalls);
    stall_timer_->start();
    set_smoothing(0.0);
}

void MonitorWidget::set_stall_policy(double factor, int64_t min_ms, int check_ms) {
    stall_factor_ = factor;
    stall_min_ms_ = min_ms;
    stall_timer_->setInterval(check_ms);
}

int MonitorWidget::add_run(const QString& name, const QString& state) {
    const int key = next_key_++;
    MonitorRun& run = runs_[key];
    run.key = key;
    run.watch = RunWatch(stall_factor_, stall_min_ms_);
    run.name = name;
    run.state = state;
    run.color = kPalette[(key - 1) % std::size(kPalette)];
    auto* item = new QListWidgetItem(name, run_list_);
    item->setData(Qt::UserRole, key);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Checked);
    QPixmap swatch(14, 14);
    swatch.fill(run.color);
    item->setIcon(QIcon(swatch));
    for (MetricPlot* p : plots_)
        p->set_run(key, name, run.color, {}, {});
    run_list_->setCurrentItem(item);
    return key;
}

Result<int> MonitorWidget::open_log(const QString& path) {
    const QFileInfo info(path);
    if (!info.isFile() || !info.isReadable()) {
        return Result<int>::Error("cannot open log file '" + path.toStdString() + "': " +
                                  (info.exists() ? "not a readable file" : "No such file or directory"));
    }
    // Kept in the history like a run (one per file: opening it again reads it again into the same run).
    int64_t history_id = 0;
    if (history_ != nullptr) {
        const QString path = info.canonicalFilePath();
        if (const Result<int64_t> before = history_->find_opened_log(path); before.ok()) {
            if (const int shown = run_for_history(*before)) remove_run(shown);  // before its points go
        }
        if (const Result<int64_t> id = history_->record_opened_log(path, info.fileName()); id.ok())
            history_id = *id;
    }
    const int key = add_run(info.fileName(), tr("opened"));
    MonitorRun& run = runs_[key];
    run.log_path = info.absoluteFilePath();
    run.history_id = history_id;
    run.loading = true;
    run.follow_id = follow_->follow(run.log_path);
    update_status();
    return key;
}

int MonitorWidget::follow_log(const QString& path, const QString& name, int64_t history_id, quint64 offset,
                              RunMetrics initial) {
    const int key = add_run(name, tr("running"));
    MonitorRun& run = runs_[key];
    run.log_path = path;
    run.history_id = history_id;
    run.live = true;
    run.metrics = std::move(initial);
    replot_run(run);
    run.follow_id = follow_->follow(path, offset);
    update_status();
    return key;
}

int MonitorWidget::show_metrics(const QString& name, RunMetrics metrics, const QString& state,
                                int64_t history_id) {
    const int key = add_run(name, state);
    MonitorRun& run = runs_[key];
    run.metrics = std::move(metrics);
    run.history_id = history_id;
    replot_run(run);
    update_target_line();
    update_status();
    return key;
}

void MonitorWidget::end_follow(int key) {
    const auto it = runs_.find(key);
    if (it == runs_.end() || it->second.follow_id == 0) return;
    follow_->finish(it->second.follow_id);
}

void MonitorWidget::set_state(int key, const QString& state) {
    const auto it = runs_.find(key);
    if (it == runs_.end()) return;
    it->second.state = state;
    update_status();
    emit run_changed(key);
}

void MonitorWidget::set_target(int key, std::optional<double> target, bool higher_is_better) {
    const auto it = runs_.find(key);
    if (it == runs_.end()) return;
    it->second.metrics.target = target;
    it->second.metrics.target_higher_is_better = higher_is_better;
    update_target_line();
}

void MonitorWidget::set_cancellable(int key, bool on) {
    const auto it = runs_.find(key);
    if (it == runs_.end()) return;
    it->second.cancellable = on;
    update_status();
}

void MonitorWidget::set_run_visible(int key, bool visible) {
    if (QListWidgetItem* item = list_item(key)) item->setCheckState(visible ? Qt::Checked : Qt::Unchecked);
}

void MonitorWidget::remove_run(int key) {
    const auto it = runs_.find(key);
    if (it == runs_.end()) return;
    if (it->second.follow_id != 0) follow_->stop(it->second.follow_id);
    const int64_t history_id = it->second.history_id;
    for (MetricPlot* p : plots_)
        p->remove_run(key);
    delete list_item(key);
    runs_.erase(it);
    if (writer_ != nullptr && history_id != 0) {
        if (const Status s = writer_->close_run(history_id); !s.ok()) {
            qWarning().noquote() << "slipway:" << QString::fromStdString(s.message());
            note_history(QString::fromStdString(s.message()));
        }
    }
    emit run_removed(key);
    if (current_ == key) {
        current_ = 0;
        if (run_list_->currentItem() != nullptr)
            set_current_run(run_list_->currentItem()->data(Qt::UserRole).toInt());
    }
    update_target_line();
    update_status();
    refresh_log_view();
    schedule_replot();
}

void MonitorWidget::clear() {
    while (!runs_.empty())
        remove_run(runs_.begin()->first);
}

void MonitorWidget::set_current_run(int key) {
    if (runs_.count(key) == 0 || key == current_) return;
    current_ = key;
    if (QListWidgetItem* item = list_item(key); item != nullptr && run_list_->currentItem() != item) {
        run_list_->setCurrentItem(item);
    }
    update_target_line();
    update_status();
    refresh_log_view();
    schedule_replot();
}

const MonitorRun* MonitorWidget::run(int key) const {
    const auto it = runs_.find(key);
    return it == runs_.end() ? nullptr : &it->second;
}

int MonitorWidget::run_for_history(int64_t history_id) const {
    for (const auto& [key, run] : runs_) {
        if (history_id != 0 && run.history_id == history_id) return key;
    }
    return 0;
}

std::vector<int> MonitorWidget::run_keys() const {
    std::vector<int> keys;
    for (const auto& [key, run] : runs_)
        keys.push_back(key);
    return keys;
}

MonitorRun* MonitorWidget::find_by_follow(int follow_id) {
    for (auto& [key, run] : runs_) {
        if (run.follow_id == follow_id) return &run;
    }
    return nullptr;
}

QListWidgetItem* MonitorWidget::list_item(int key) const {
    for (int i = 0; i < run_list_->count(); ++i) {
        if (run_list_->item(i)->data(Qt::UserRole).toInt() == key) return run_list_->item(i);
    }
    return nullptr;
}

int MonitorWidget::watch_run(const QString& name, int64_t history_id, RunMetrics initial) {
    const int key = add_run(name, tr("submitting"));
    MonitorRun& run = runs_[key];
    run.history_id = history_id;
    run.live = true;
    run.metrics = std::move(initial);
    replot_run(run);
    update_status();
    return key;
}

void MonitorWidget::feed(int key, const FollowBatch& batch) {
    const auto it = runs_.find(key);
    if (it != runs_.end()) apply(it->second, batch);
}

void MonitorWidget::on_batch(const FollowBatch& batch) {
    MonitorRun* found = find_by_follow(batch.follow_id);
    if (found != nullptr) apply(*found, batch);
}

void MonitorWidget::apply(MonitorRun& run, const FollowBatch& batch) {
    if (!batch.error.isEmpty()) {
        run.lines.push_back(tr("[slipway] %1").arg(batch.error));
        if (run.key == current_) log_view_->appendPlainText(run.lines.back());
    }
    if (batch.reset) {
        // The log was rewritten (a restarted job): its old curves are gone.
        RunMetrics fresh;
        fresh.target = run.metrics.target;
        fresh.target_higher_is_better = run.metrics.target_higher_is_better;
        run.metrics = std::move(fresh);
        run.watch = RunWatch(stall_factor_, stall_min_ms_);
        run.lines.clear();
        if (writer_ != nullptr && run.history_id != 0) writer_->reset(run.history_id);
        replot_run(run);
    }
    std::array<size_t, kMetricCount> first_new{};
    for (Metric m : kAllMetrics)
        first_new[static_cast<size_t>(m)] = run.metrics.points(m).size();
    std::vector<MetricPointRow> rows;
    const bool had_target = run.metrics.target.has_value();
    const int64_t now = now_ms();
    for (const MllogEvent& event : batch.events) {
        if (const std::optional<Metric> m = run.metrics.add(event); m && run.history_id != 0) {
            rows.emplace_back(*m, run.metrics.points(*m).back());
        }
        if (run.live) {
            for (const RunAlert& a : run.watch.on_event(event, run.metrics, now))
                emit alert(run.name, a);
        }
    }
    if (writer_ != nullptr && run.history_id != 0 && (!rows.empty() || batch.offset > 0))
        writer_->append(run.history_id, std::move(rows), run.metrics, batch.offset);
    append_points(run, first_new);
    if (!had_target && run.metrics.target) update_target_line();

    run.bad_lines += batch.bad_lines;
    run.lines_not_sent += batch.lines_skipped;
    if (batch.lines_skipped > 0) {
        run.lines.push_back(tr("[slipway] ... %1 lines not shown ...").arg(batch.lines_skipped));
    }
    for (const QString& line : batch.lines)
        run.lines.push_back(line);
    while (run.lines.size() > static_cast<size_t>(kMaxLogLines)) {
        run.lines.pop_front();
        ++run.lines_dropped;
    }
    // A file being read shows its log once at the end (appending thousands of lines per batch to the
    // view costs more than parsing them); live runs show every batch.
    // An older part of the log found by a search stays shown until the search is cleared.
    const bool showing_end = file_window_line_ < 0;
    if (run.key == current_ && !run.loading && showing_end &&
        (!batch.lines.isEmpty() || batch.lines_skipped > 0)) {
        if (batch.reset) {
            refresh_log_view();
        } else {
            QStringList shown = batch.lines;
            if (batch.lines_skipped > 0) shown.prepend(run.lines[run.lines.size() - batch.lines.size() - 1]);
            log_view_->appendPlainText(shown.join(QLatin1Char('\n')));
            log_view_->horizontalScrollBar()->setValue(0);
        }
    }
    if (run.loading && !batch.behind && !batch.missing) {
        if (batch.finished) {
            run.loading = false;
            run.follow_id = 0;
            if (history_ != nullptr && run.history_id != 0)
                history_->finish_opened_log(run.history_id, run.metrics);
            if (run.key == current_) refresh_log_view();
            emit loaded(run.key);
        } else {
            follow_->finish(run.follow_id);  // a last line without '\n' too
        }
    } else if (batch.finished) {
        run.follow_id = 0;
    }
    update_status();
    emit run_changed(run.key);
}

QString MonitorWidget::status_text() const {
    return status_label_->text();
}

void MonitorWidget::update_status() {
    const MonitorRun* r = run(current_);
    cancel_button_->setEnabled(r != nullptr && r->cancellable);
    if (r == nullptr) {
        status_label_->setText(tr("No run. File > Open log... or submit a run."));
        return;
    }
    const RunMetrics& m = r->metrics;
    QStringList parts;
    parts << QStringLiteral("<b>%1</b>").arg(r->name.toHtmlEscaped()) << r->state;
    if (m.status) parts << tr("run_stop: %1").arg(QString::fromStdString(*m.status));
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
        QString text = tr("eval_accuracy %1").arg(eval.back().value, 0, 'g', 5);
        if (m.target) text += tr(" (target %1)").arg(*m.target);
        parts << text;
    }
    parts << tr("%1 points").arg(m.total_points());
    if (r->loading) parts << tr("reading...");
    if (r->history_id != 0 && writer_ != nullptr && writer_->failing())
        parts << tr("<span style=\"color:#c62828\">history not written, retrying</span>");
    status_label_->setText(parts.join(QStringLiteral(" &middot; ")));
}

void MonitorWidget::refresh_log_view() {
    file_window_line_ = -1;  // back to the run's last lines
    const MonitorRun* r = run(current_);
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
    for (auto& [key, run] : runs_) {
        if (run.history_id == 0) continue;
        run.lines.push_back(line);
        if (key == current_ && file_window_line_ < 0) log_view_->appendPlainText(line);
    }
    update_status();
}

void MonitorWidget::check_stalls() {
    const int64_t now = now_ms();
    for (auto& [key, run] : runs_) {
        if (!run.live) continue;
        if (const std::optional<RunAlert> a = run.watch.check_stall(now)) emit alert(run.name, *a);
    }
}

}  // namespace slipway::app
