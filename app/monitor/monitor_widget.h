// The monitor: train_loss, eval_accuracy (with the target line), learning rate and tokens/s of one or
// more runs overlaid, and beside them the eval_task metrics (one curve per run, task and metric) when a log
// has them, against samples, steps or wall time; EMA smoothing with the raw curve faint behind, log scale,
// PNG/CSV export of what is shown; the current run's state, elapsed time and ETA, a Cancel button, and its
// raw log with search. A view of the RunTracker: runs, their metrics and states are the tracker's; the
// monitor keeps only what it draws (colours, the log's last lines) and forwards Cancel and Remove to the
// window / the tracker.
#pragma once

#include <QColor>
#include <QElapsedTimer>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <deque>
#include <map>
#include <optional>

#include "contract/status.h"
#include "core/follow_service.h"
#include "core/run_metrics.h"
#include "monitor/log_search.h"
#include "runs/run_tracker.h"

class QCheckBox;
class QCPGraph;
class QComboBox;
class QLabel;
class QLineEdit;
class QListView;
class QSortFilterProxyModel;
class QPlainTextEdit;
class QPushButton;
class QSlider;
class QTimer;

namespace slipway::app {

class RunsModel;

class MetricPlot;

// What the monitor keeps of a run beyond the tracker's model: how it is drawn and its log's tail.
struct MonitorView {
    int key = 0;
    QColor color;
    std::deque<QString> lines;  // the last kMaxLogLines lines of its log
    qint64 lines_dropped = 0;   // older lines no longer kept
    qint64 lines_not_sent = 0;  // lines of big batches the follower did not send
};

class MonitorWidget : public QWidget {
    Q_OBJECT

public:
    static constexpr int kMaxLogLines = 20000;

    // Neither is owned; both must outlive the widget. The run list is a view of `runs`' tracked rows (the
    // model the Runs page shares); null: the monitor keeps a model of its own over the tracker.
    explicit MonitorWidget(RunTracker* tracker, RunsModel* runs = nullptr, QWidget* parent = nullptr);

    // Shows or hides a run's curves (the check box in the run list).
    void set_run_visible(int key, bool visible);
    // Removes a run from the monitor: the tracker releases it (its follow stops).
    void remove_run(int key);
    void clear();

    int current_run() const { return current_; }
    void set_current_run(int key);
    // The tracker's run (metrics, state) and the monitor's view of it; null when it is not shown.
    const TrackedRun* run(int key) const;
    const MonitorView* view(int key) const;
    std::vector<int> run_keys() const;
    RunTracker* tracker() const { return tracker_; }

    void set_x_axis(XAxis axis);
    void set_smoothing(double weight);  // [0, 0.99]
    void set_log_scale(bool on);
    XAxis x_axis() const { return x_axis_; }

    MetricPlot* plot(Metric metric) const { return plots_[static_cast<size_t>(metric)]; }
    // The eval_task plots, one per family (scores, perplexity): each shown while a shown run has points of
    // its family; the legend, under the plot, names each curve "task/metric" (prefixed with the run's name
    // when several runs are in the monitor).
    MetricPlot* task_plot(TaskFamily family) const {
        return plots_[kMetricCount + static_cast<size_t>(family)];
    }
    // The task plots' curve of one run's series ("task/metric"), or null.
    QCPGraph* task_graph(int key, const std::string& series) const;
    QPlainTextEdit* log_view() const { return log_view_; }
    QString status_text() const;

    // The plots as one PNG, as they are shown.
    Status export_png(const QString& path) const;
    // Every visible curve (raw and smoothed values) on the current x axis.
    Status export_csv(const QString& path) const;
    // Looks for `text` in the raw log from the cursor on; true when the shown lines have it. When they
    // do not and the run's log is a local file longer than what is kept, the whole file is searched on a
    // worker thread and a hit is shown with the lines around it (log_search_finished); otherwise the
    // search wraps around the shown lines.
    bool find_in_log(const QString& text, bool backward = false);
    bool log_search_pending() const { return log_search_pending_; }

signals:
    void cancel_requested(int key);
    void export_requested(bool png);       // the Export PNG / CSV buttons: the window asks for a file name
    void log_search_finished(bool found);  // a whole-file search of find_in_log ended

private:
    void on_run_added(int key);
    void on_batch_applied(int key, const FollowBatch& batch,
                          const std::array<size_t, kMetricCount>& first_new);
    void on_run_released(int key);
    void replot_run(int key);
    void append_points(int key, const std::array<size_t, kMetricCount>& first_new);
    void update_target_line();
    // The run's eval_task series onto the task plot (all of them: a few points per evaluation).
    void refresh_task_curves(int key);
    void mark_resumes(const TrackedRun& run);  // a restarted job's segments, on every metric plot
    void remove_task_curves(int key);
    // The eval plot says what its curves measure (eval loss under MLPerf's eval_accuracy key, or token
    // accuracy), from the shown runs' logs.
    void update_eval_title();
    void update_status();
    void refresh_log_view();
    void show_log_search_hit(int search_id, int key, const QString& text, const Result<LogSearchHit>& hit);
    // A line in the log of every stored run: the history's one message when it fails or recovers.
    void note_history(const QString& message);
    void schedule_replot();

    RunTracker* tracker_;
    std::map<int, MonitorView> views_;
    int current_ = 0;
    XAxis x_axis_ = XAxis::kSamples;
    void show_task_plots();  // each task plot while a shown run has a curve on it
    // The metrics' plots, then the task plots.
    std::array<MetricPlot*, kMetricCount + kTaskFamilyCount> plots_{};
    std::map<std::pair<int, std::string>, int> task_curves_;  // (run key, "task/metric") -> curve id (< 0)
    int next_task_curve_ = 1;
    bool replot_pending_ = false;

    // The run at a row of the run list; 0 for none.
    int key_at(const QModelIndex& list_row) const;
    QModelIndex list_row_of(int key) const;

    RunsModel* runs_model_;                 // which runs are shown, and their rows
    QSortFilterProxyModel* run_list_rows_;  // its tracked rows, in the order they were added
    QListView* run_list_;
    QComboBox* x_axis_box_;
    QSlider* smoothing_slider_;
    QLabel* smoothing_label_;
    QCheckBox* log_scale_box_;
    QPushButton* cancel_button_;
    QLabel* status_label_;
    QPlainTextEdit* log_view_;
    QLineEdit* search_box_;
    QLabel* search_result_;
    int log_search_id_ = 0;  // a whole-file search's answer is dropped once a newer one started
    bool log_search_pending_ = false;
    int64_t file_window_line_ = -1;  // the file line of the hit shown from a whole-file search; -1: none
    QWidget* plot_grid_;
};

}  // namespace slipway::app
