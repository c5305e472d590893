// The runs page: every run in the history (name, cluster, job, state, times, points, a small train_loss
// curve) in a sortable table, a filter, and actions to show a run's curves in the monitor, compare several
// there (overlaid), resume following its log from the stored offset, open its config in the editor, chat
// with its model, write its curves as TensorBoard events, or delete it. The table is a view of the stored
// rows of the RunsModel it shares with the monitor's run list (through a filtering, sorting proxy): a reload
// merges the store's changes in and the tracker's changes come as they happen, so the selection and the
// scroll position stay. It only reads the store; what it asks for goes to the window.
#pragma once

#include <QWidget>

#include <QList>

#include <cstdint>

#include "contract/status.h"
#include "track/log_export.h"

class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace slipway::app {

class RunHistory;
class RunsModel;

class RunsPage : public QWidget {
    Q_OBJECT

public:
    // Neither is owned; `history` may be null (no store), `model` must outlive the page.
    RunsPage(RunHistory* history, RunsModel* model, QWidget* parent = nullptr);

    void reload();
    QTableView* table() const { return table_; }
    RunsModel* model() const { return model_; }  // every run; the table shows the stored ones
    QLineEdit* filter_box() const { return filter_; }
    QPushButton* compare_button() const { return compare_; }
    QPushButton* export_gguf_button() const { return export_gguf_; }
    int64_t selected_run() const;         // the current row's run; 0 when none
    QList<qint64> selected_runs() const;  // every selected row's run, top to bottom as shown
    int shown_rows() const;               // rows the filter lets through
    // Makes the run the current row (selected); false when it is not shown.
    bool select_run(int64_t run_id);
    // The run's stored curves where teams look (what Export metrics does once a folder is chosen):
    // TensorBoard events in `folder`/<its name>/, or a run named so in the MLflow file store `folder`. The
    // event file or the MLflow run's folder, or why not.
    Result<QString> export_metrics(int64_t run_id, track::ExportFormat format, const QString& folder) const;

signals:
    void show_requested(int64_t run_id);
    void follow_requested(int64_t run_id);
    void edit_requested(int64_t run_id);
    void chat_requested(int64_t run_id);                   // talk to the run's model on the Chat page
    void export_gguf_requested(int64_t run_id);            // its model as one GGUF file for llama.cpp
    void delete_requested(int64_t run_id);                 // asked and confirmed
    void compare_requested(const QList<qint64>& run_ids);  // overlay these in the monitor, alone

private:
    // Asks for a folder, exports the selected run into it and says where it went, with `command` (%1: the
    // folder) that opens it.
    void ask_and_export(track::ExportFormat format, const QString& folder_title, const QString& command);

    RunHistory* history_;
    RunsModel* model_;
    QSortFilterProxyModel* proxy_;
    QTableView* table_;
    QLineEdit* filter_;
    QPushButton* compare_;
    QPushButton* show_;
    QPushButton* follow_;
    QPushButton* edit_;
    QPushButton* chat_;
    QPushButton* export_gguf_;
    QPushButton* export_metrics_;
    QPushButton* delete_;
};

}  // namespace slipway::app
