// RunsModel: every run the app knows as one Qt table model, shared by the Runs page and the monitor's run
// list. A row is one run: a stored row of the run history, a run the tracker follows (in the monitor), or
// both at once (a stored run shown in the monitor is one row, not two). Each view is a filter over it: the
// Runs page shows the stored rows (sorted and filtered by text), the monitor's list the tracked ones, in the
// order they were added. Both views hear every change through the model: reload() merges the store's rows
// in, and the tracker's run_added / run_changed / run_released update tracked rows as they happen; rows are
// inserted, removed and their cells reported changed (never a reset), so each view keeps its selection,
// current row, scroll position and sort order. No widgets: a row's train_loss curve is data (kCurveRole),
// drawn by the Runs page's delegate; whether a run's curves are shown is the Name column's check state,
// which the monitor hears through shown_changed.
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QList>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <vector>

#include "history/run_history.h"

namespace slipway::app {

class RunTracker;
struct TrackedRun;

class RunsModel : public QAbstractTableModel {
    Q_OBJECT

public:
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
    enum Role {
        kRunIdRole = Qt::UserRole + 1,  // the row's stored run id (qint64; 0: not stored), in every column
        kSortRole,                      // what the column sorts by: numbers as numbers, times as times
        kCurveRole,                     // kLossColumn: the sampled train_loss values (QList<double>)
        kTrackerKeyRole,                // the tracker's key of the run (int; 0: not in the monitor)
        kTrackedOrderRole,  // when it was added to the monitor (int; rising), for the monitor's order
    };
    // Points of the sampled train_loss curve a row carries.
    static constexpr int kCurvePoints = 96;

    // Neither is owned; either may be null (no store: only tracked rows; no tracker: only stored rows). The
    // model takes the tracker's runs as they are now and follows its signals.
    RunsModel(RunHistory* history, RunTracker* tracker, QObject* parent = nullptr);

    // Reads the store again and merges its rows in.
    void reload();

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    // The Name column's check state of a tracked row: whether its curves are shown.
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    int64_t run_id(int row) const;           // 0 for a row out of range or not stored
    int row_of(int64_t run_id) const;        // -1 when no row is that stored run
    int row_of_tracked(int key) const;       // -1 when no row is that tracked run
    const StoredRun* record(int row) const;  // null when out of range or not stored

    // A tracked run's row (idempotent: the tracker's run_added does the same); false when the tracker has
    // no such run.
    bool track(int key);
    // Whether a tracked run's curves are shown; a run not in the model counts as shown. Emits shown_changed
    // when it changes (a user's check comes here too, through setData).
    void set_shown(int key, bool shown);
    bool is_shown(int key) const;

    // The colour of a tracked run's curves, its swatch in the monitor's list.
    static QColor color_of(int key);

signals:
    void shown_changed(int key, bool shown);

private:
    // A run in the monitor: the model's bookkeeping of it.
    struct Tracked {
        int key = 0;
        int order = 0;         // when the monitor got it (rising)
        bool shown = true;     // its curves overlaid
        int64_t store_id = 0;  // the tracker's stored id of it when last seen (a change may join two rows)
        // Its cells as last reported: a run_changed that changes none (most are a log batch's) reports
        // nothing.
        QStringList cells;
    };
    struct Row {
        std::optional<StoredRun> record;  // the stored row
        std::optional<Tracked> tracked;
        int64_t points = -1;  // -1: not known
        QList<double> curve;  // sampled train_loss, read again only when `points` changed
    };
    void read_points(Row& row, const Row* before) const;
    bool same_cells(const Row& a, const Row& b) const;
    void report_row_changed(int row);
    void insert(Row row);
    void remove(int row);
    // A tracked row without a stored row, whose run the tracker now knows by the id of a stored row the model
    // has untracked, becomes that row (one row a run); each view's current row and selection stay on the run.
    void join_stored_rows();
    void join(int tracked_row, int stored_row);
    void on_run_changed(int key);
    void on_run_released(int key);
    const TrackedRun* tracked_run(const Row& row) const;
    // Whether the tracker, not the stored row, says the run's state: it follows the run live, or mirrors
    // the row another process writes; a stored run only shown (its curves) is the store's to say.
    bool tracker_says_state(const Row& row) const;
    QString text_of(const Row& row, int column) const;  // a cell's DisplayRole
    QString tooltip_of(const Row& row) const;           // the Name column's
    QStringList cells_of(const Row& row) const;         // every text a row shows

    RunHistory* history_;
    RunTracker* tracker_;
    std::vector<Row> rows_;
    int next_order_ = 1;
};

}  // namespace slipway::app
