// The runs page: every run in the history (name, cluster, job, state, times, points), with actions to
// show a run's curves in the monitor, resume following its log from the stored offset, open its config
// in the editor, or delete it. It only reads the store; what it asks for goes to the window.
#pragma once

#include <QWidget>

#include <cstdint>

class QTableWidget;
class QPushButton;

namespace slipway::app {

class RunHistory;

class RunsPage : public QWidget {
    Q_OBJECT

public:
    explicit RunsPage(RunHistory* history, QWidget* parent = nullptr);

    void reload();
    QTableWidget* table() const { return table_; }
    int64_t selected_run() const;  // 0 when none

signals:
    void show_requested(int64_t run_id);
    void follow_requested(int64_t run_id);
    void edit_requested(int64_t run_id);
    void delete_requested(int64_t run_id);  // asked and confirmed

private:
    RunHistory* history_;
    QTableWidget* table_;
    QPushButton* show_;
    QPushButton* follow_;
    QPushButton* edit_;
    QPushButton* delete_;
};

}  // namespace slipway::app
