// RunsTableModel (runs_table_model.h): the store's rows, merged in at each reload.
#include "runs/runs_table_model.h"
#include "core/run_state_display.h"

#include <QCoreApplication>

#include <optional>
#include <unordered_set>

namespace slipway::app {
namespace {

// The Runs page's words (translated in its context, where they always were).
QString runs_page_text(const char* text) {
    return QCoreApplication::translate("slipway::app::RunsPage", text);
}

QString time_text(const QDateTime& t) {
    return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QString();
}

// Where a run ran, for the Cluster column: a profile's name as it is; the stored words for an opened log file
// and This computer translated.
QString where_text(const QString& cluster) {
    if (cluster == kOpenedLogSource) return runs_page_text("log file");
    if (cluster == kLocalProfile) return runs_page_text("This computer");
    return cluster;
}

QDateTime started_of(const RunRecord& r) {
    return r.started.isValid() ? r.started : r.created;
}

}  // namespace

RunsTableModel::RunsTableModel(RunHistory* history, QObject* parent)
    : QAbstractTableModel(parent), history_(history) {
    reload();
}

QString RunsTableModel::state_text(const RunRecord& r) {
    QString text = r.state_detail.isEmpty()
                       ? display_text(r.state)
                       : runs_page_text("%1 (%2)").arg(display_text(r.state), r.state_detail);
    if (r.restarts > 0) text += runs_page_text(", restarts: %1").arg(r.restarts);
    return text;
}

RunsTableModel::Row RunsTableModel::read_row(const RunRecord& record, const Row* before) const {
    Row row;
    row.record = record;
    if (history_ == nullptr) return row;
    const Result<int64_t> points = history_->point_count(record.id);
    row.points = points.ok() ? *points : -1;
    if (before != nullptr && before->points == row.points) {
        row.curve = before->curve;
    } else if (row.points > 1) {
        const Result<std::vector<double>> values =
            history_->sampled_values(record.id, Metric::kTrainLoss, kCurvePoints);
        if (values.ok()) row.curve = QList<double>(values->begin(), values->end());
    }
    return row;
}

bool RunsTableModel::same_cells(const Row& a, const Row& b) {
    const RunRecord &x = a.record, &y = b.record;
    return x.name == y.name && x.cluster == y.cluster && x.job_id == y.job_id && x.state == y.state &&
           x.state_detail == y.state_detail && x.restarts == y.restarts && x.created == y.created &&
           x.started == y.started && x.finished == y.finished && a.points == b.points && a.curve == b.curve;
}

void RunsTableModel::reload() {
    std::vector<RunRecord> now;
    if (history_ != nullptr) {
        Result<std::vector<RunRecord>> runs = history_->runs();
        if (!runs.ok()) return;  // keep what is shown; the store's writer reports its own problems
        now = std::move(*runs);
    }
    std::unordered_set<int64_t> wanted;
    for (const RunRecord& r : now)
        wanted.insert(r.id);
    for (int i = static_cast<int>(rows_.size()) - 1; i >= 0; --i) {  // gone from the store
        if (wanted.count(rows_[static_cast<size_t>(i)].record.id) != 0) continue;
        beginRemoveRows(QModelIndex(), i, i);
        rows_.erase(rows_.begin() + i);
        endRemoveRows();
    }
    // Walk the store's order: a row in place is updated, a new one inserted, one that moved taken out and put
    // back at its place.
    for (size_t i = 0; i < now.size(); ++i) {
        const int at = static_cast<int>(i);
        if (i < rows_.size() && rows_[i].record.id == now[i].id) {
            Row fresh = read_row(now[i], &rows_[i]);
            if (!same_cells(fresh, rows_[i])) {
                rows_[i] = std::move(fresh);
                emit dataChanged(index(at, 0), index(at, kColumnCount - 1));
            } else {
                rows_[i].record = now[i];  // what no cell shows (its log offset, its config) stays current
            }
            continue;
        }
        std::optional<Row> moved;
        if (const int from = row_of(now[i].id); from >= 0) {
            beginRemoveRows(QModelIndex(), from, from);
            moved = std::move(rows_[static_cast<size_t>(from)]);
            rows_.erase(rows_.begin() + from);
            endRemoveRows();
        }
        beginInsertRows(QModelIndex(), at, at);
        rows_.insert(rows_.begin() + at, read_row(now[i], moved ? &*moved : nullptr));
        endInsertRows();
    }
}

int RunsTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RunsTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : kColumnCount;
}

const RunRecord* RunsTableModel::record(int row) const {
    return row >= 0 && row < static_cast<int>(rows_.size()) ? &rows_[static_cast<size_t>(row)].record
                                                            : nullptr;
}

int64_t RunsTableModel::run_id(int row) const {
    const RunRecord* r = record(row);
    return r != nullptr ? r->id : 0;
}

int RunsTableModel::row_of(int64_t run_id) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].record.id == run_id) return static_cast<int>(i);
    return -1;
}

QVariant RunsTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
    const Row& row = rows_[static_cast<size_t>(index.row())];
    const RunRecord& r = row.record;
    if (role == kRunIdRole) return static_cast<qlonglong>(r.id);
    if (role == kCurveRole)
        return index.column() == kLossColumn ? QVariant::fromValue(row.curve) : QVariant();
    if (role == kSortRole) {
        switch (index.column()) {
            case kIdColumn:
                return static_cast<qlonglong>(r.id);
            case kJobColumn:
                return r.job_id.toLongLong();  // numeric where it is a Slurm job or a pid
            case kLossColumn:
                return row.curve.isEmpty() ? QVariant() : QVariant(row.curve.back());
            case kStartedColumn:
                return started_of(r);
            case kFinishedColumn:
                return r.finished;
            case kPointsColumn:
                return static_cast<qlonglong>(row.points);
            default:
                break;
        }
        role = Qt::DisplayRole;
    }
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    switch (index.column()) {
        case kIdColumn:
            return QString::number(r.id);
        case kNameColumn:
            return r.name;
        case kClusterColumn:
            return where_text(r.cluster);
        case kJobColumn:
            return r.job_id;
        case kStateColumn:
            return state_text(r);
        case kLossColumn:
            return role == Qt::ToolTipRole && !row.curve.isEmpty()
                       ? runs_page_text("last train_loss %1").arg(row.curve.back())
                       : QVariant();
        case kStartedColumn:
            return time_text(started_of(r));
        case kFinishedColumn:
            return time_text(r.finished);
        case kPointsColumn:
            return row.points >= 0 ? QString::number(row.points) : QString();
        default:
            return {};
    }
}

QVariant RunsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
#define RUNS_PAGE_WORD(text) QT_TRANSLATE_NOOP("slipway::app::RunsPage", text)
    static const char* const kHeaders[kColumnCount] = {
        RUNS_PAGE_WORD("Id"),      RUNS_PAGE_WORD("Name"),     RUNS_PAGE_WORD("Cluster"),
        RUNS_PAGE_WORD("Job"),     RUNS_PAGE_WORD("State"),    RUNS_PAGE_WORD("train_loss"),
        RUNS_PAGE_WORD("Started"), RUNS_PAGE_WORD("Finished"), RUNS_PAGE_WORD("Points")};
#undef RUNS_PAGE_WORD
    return section >= 0 && section < kColumnCount ? runs_page_text(kHeaders[section]) : QVariant();
}

}  // namespace slipway::app
