// RunsTableModel: the run history's rows as a Qt table model, for the Runs page's view (which sorts and
// filters it through a proxy) and any other view of stored runs. reload() merges the store's current rows
// in: rows that appeared are inserted, rows that went are removed and changed cells are reported, so a view
// keeps its selection, current row, scroll position and sort order while the store changes under it (a
// run's state, its points, a run another process submitted). No widgets: a row's train_loss curve is data
// (kCurveRole), drawn by the view's delegate.
#pragma once

#include <QAbstractTableModel>
#include <QList>

#include <cstdint>
#include <map>
#include <vector>

#include "history/run_history.h"

namespace slipway::app {

class RunsTableModel : public QAbstractTableModel {
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
        kRunIdRole = Qt::UserRole + 1,  // the row's run id (qint64), in every column
        kSortRole,                      // what the column sorts by: numbers as numbers, times as times
        kCurveRole,                     // kLossColumn: the sampled train_loss values (QList<double>)
    };
    // Points of the sampled train_loss curve a row carries.
    static constexpr int kCurvePoints = 96;

    // `history` may be null (no store): the model stays empty.
    explicit RunsTableModel(RunHistory* history, QObject* parent = nullptr);

    // Reads the store again and merges its rows in (newest first, as RunHistory::runs gives them).
    void reload();

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    int64_t run_id(int row) const;     // 0 for a row out of range
    int row_of(int64_t run_id) const;  // -1 when the run is not in the model
    const RunRecord* record(int row) const;

    // The State column's text: the state, what it does not say (node list, exit code), and how often a
    // requeued job resumed.
    static QString state_text(const RunRecord& run);

private:
    struct Row {
        RunRecord record;
        int64_t points = -1;  // -1: not known
        QList<double> curve;  // sampled train_loss, read again only when `points` changed
    };
    Row read_row(const RunRecord& record, const Row* before) const;
    static bool same_cells(const Row& a, const Row& b);

    RunHistory* history_;
    std::vector<Row> rows_;
};

}  // namespace slipway::app
