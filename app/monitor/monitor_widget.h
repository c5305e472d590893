// The monitor: train_loss, eval_accuracy (with the target line), learning rate and tokens/s of one or
// more runs overlaid, against samples, steps or wall time; EMA smoothing with the raw curve faint behind,
// log scale, PNG/CSV export of what is shown; the current run's state, elapsed time and ETA, a Cancel
// button, and its raw log with search. Logs arrive from the FollowService (a worker thread); live runs
// are stored in the RunHistory as they arrive (through its HistoryWriter, which keeps and retries what
// cannot be written) and watched for finish, failure, target and stalls.
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
#include "monitor/follow_service.h"
#include "monitor/log_search.h"
#include "monitor/run_metrics.h"
#include "monitor/run_watch.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QPlainTextEdit;
class QPushButton;
class QSlider;
class QTimer;

namespace slipway::app {

class HistoryWriter;
class MetricPlot;
class RunHistory;

struct MonitorRun {
    int key = 0;
    QString name;
    QColor color;
    QString state;  // "running", "completed", "failed", "opened", ...
    QString log_path;
    RunMetrics metrics;
    RunWatch watch;
    int follow_id = 0;       // 0: not following
    int64_t history_id = 0;  // 0: not stored
    bool live = false;       // a run in progress: alerts and stall checks apply
    bool loading = false;    // an opened file still being read
    bool cancellable = false;
    std::deque<QString> lines;  // the last kMaxLogLines lines of its log
    qint64 lines_dropped = 0;   // older lines no longer kept
    qint64 lines_not_sent = 0;  // lines of big batches the follower did not send
    qint64 bad_lines = 0;
};

class MonitorWidget : public QWidget {
    Q_OBJECT

public:
    static constexpr int kMaxLogLines = 20000;

    // `history` may be null (nothing is stored). Neither is owned.
    MonitorWidget(FollowService* follow, RunHistory* history, QWidget* parent = nullptr);

    // Reads a whole log file (any MLLOG log: an MLPerf result, a slurm-N.out, an engine mllog.txt) and
    // adds it as a run; `loaded(key)` is emitted when it is read. Fails at once when the file is missing.
    // With a history, the file is stored as a run there (state from its run_stop), one run per file.
    Result<int> open_log(const QString& path);
    // Follows a log that is being written (live run). `history_id` stores points and offset there;
    // `offset`/`initial` resume a run already partly stored.
    int follow_log(const QString& path, const QString& name, int64_t history_id = 0, quint64 offset = 0,
                   RunMetrics initial = {});
    // A live run whose log batches come from elsewhere (a cluster's session): feed() them in.
    int watch_run(const QString& name, int64_t history_id = 0, RunMetrics initial = {});
    void feed(int key, const FollowBatch& batch);
    // Shows stored curves (a finished run from the history).
    int show_metrics(const QString& name, RunMetrics metrics, const QString& state, int64_t history_id = 0);
    // The writer ended: reads the rest of the log (a last line without '\n' too) and stops following.
    void end_follow(int key);
    void set_state(int key, const QString& state);
    void set_target(int key, std::optional<double> target, bool higher_is_better);
    void set_cancellable(int key, bool on);
    // Shows or hides a run's curves (the check box in the run list).
    void set_run_visible(int key, bool visible);
    void remove_run(int key);
    void clear();

    int current_run() const { return current_; }
    void set_current_run(int key);
    const MonitorRun* run(int key) const;
    int run_for_history(int64_t history_id) const;
    std::vector<int> run_keys() const;

    // A live run stalls after `factor` x its median step interval without a new step, never sooner than
    // min_ms; checked every check_ms. Applies to runs added afterwards.
    void set_stall_policy(double factor, int64_t min_ms, int check_ms = 5000);

    void set_x_axis(XAxis axis);
    void set_smoothing(double weight);  // [0, 0.99]
    void set_log_scale(bool on);
    XAxis x_axis() const { return x_axis_; }

    MetricPlot* plot(Metric metric) const { return plots_[static_cast<size_t>(metric)]; }
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
    void loaded(int key);
    void cancel_requested(int key);
    void export_requested(bool png);  // the Export PNG / CSV buttons: the window asks for a file name
    void alert(const QString& run_name, const slipway::app::RunAlert& alert);
    void run_changed(int key);             // new points, state or status
    void run_removed(int key);             // the owner of an external feed can stop it
    void log_search_finished(bool found);  // a whole-file search of find_in_log ended

private:
    void on_batch(const FollowBatch& batch);
    void apply(MonitorRun& run, const FollowBatch& batch);
    void replot_run(MonitorRun& run);
    void append_points(MonitorRun& run, const std::array<size_t, kMetricCount>& first_new);
    void update_target_line();
    void update_status();
    void refresh_log_view();
    void show_log_search_hit(int search_id, int key, const QString& text, const Result<LogSearchHit>& hit);
    void check_stalls();
    // A line in the log of every stored run: the history's one message when it fails or recovers.
    void note_history(const QString& message);
    int add_run(const QString& name, const QString& state);
    MonitorRun* find_by_follow(int follow_id);
    void schedule_replot();
    QListWidgetItem* list_item(int key) const;

    FollowService* follow_;
    RunHistory* history_;
    HistoryWriter* writer_ = nullptr;  // history_'s
    std::map<int, MonitorRun> runs_;
    int next_key_ = 1;
    int current_ = 0;
    XAxis x_axis_ = XAxis::kSamples;
    std::array<MetricPlot*, kMetricCount> plots_{};
    bool replot_pending_ = false;
    double stall_factor_ = 5.0;
    int64_t stall_min_ms_ = 60'000;
    QTimer* stall_timer_ = nullptr;

    QListWidget* run_list_;
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
