// The runs page: every run in the history (name, cluster, job, state, times, points, a small train_loss
// curve), a filter, and actions to show a run's curves in the monitor, compare several there (overlaid),
// resume following its log from the stored offset, open its config in the editor, chat with its model, or
// delete it. It only reads
// the store; what it asks for goes to the window.
#pragma once

#include <QWidget>

#include <QList>
#include <QPixmap>

#include <cstdint>
#include <map>
#include <utility>

class QLineEdit;
class QTableWidget;
class QPushButton;

namespace slipway::app {

class RunHistory;
struct RunRecord;

class RunsPage : public QWidget {
    Q_OBJECT

public:
    explicit RunsPage(RunHistory* history, QWidget* parent = nullptr);

    // The Runs table's columns.
    enum Column {
        kIdColumn = 0,
        kNameColumn,
        kClusterColumn,
        kJobColumn,
        kStateColumn,
        kLossColumn,
        kStartedColumn,
        kFinishedColumn,
        kPointsColumn,
        kColumnCount
    };

    void reload();
    QTableWidget* table() const { return table_; }
    QLineEdit* filter_box() const { return filter_; }
    QPushButton* compare_button() const { return compare_; }
    QPushButton* export_gguf_button() const { return export_gguf_; }
    int64_t selected_run() const;         // the current row's run; 0 when none
    QList<qint64> selected_runs() const;  // every selected row's run, top to bottom

signals:
    void show_requested(int64_t run_id);
    void follow_requested(int64_t run_id);
    void edit_requested(int64_t run_id);
    void chat_requested(int64_t run_id);                   // talk to the run's model on the Chat page
    void export_gguf_requested(int64_t run_id);            // its model as one GGUF file for llama.cpp
    void delete_requested(int64_t run_id);                 // asked and confirmed
    void compare_requested(const QList<qint64>& run_ids);  // overlay these in the monitor, alone

private:
    void apply_filter();
    // A run's small train_loss curve, drawn again only when its point count changed.
    QPixmap loss_curve(int64_t run_id, int64_t points);
    static QString state_text(const RunRecord& run);

    RunHistory* history_;
    QTableWidget* table_;
    QLineEdit* filter_;
    QPushButton* compare_;
    std::map<int64_t, std::pair<int64_t, QPixmap>> curves_;  // run id -> (point count, curve)
    QPushButton* show_;
    QPushButton* follow_;
    QPushButton* edit_;
    QPushButton* chat_;
    QPushButton* export_gguf_;
    QPushButton* delete_;
};

}  // namespace slipway::app
