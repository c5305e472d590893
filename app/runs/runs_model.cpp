// RunsModel (runs_model.h): the store's rows merged in at each reload, the tracker's runs joined to them as
// the tracker adds, changes and releases them.
#include "runs/runs_model.h"

#include <QCoreApplication>

#include <iterator>
#include <unordered_set>

#include "core/run_state_display.h"
#include "runs/run_tracker.h"

namespace slipway::app {
namespace {

// The Runs page's and the monitor's words, translated in their contexts, where they always were.
QString runs_page_text(const char* text) {
    return QCoreApplication::translate("slipway::app::RunsPage", text);
}
QString monitor_text(const char* text) {
    return QCoreApplication::translate("slipway::app::MonitorWidget", text);
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

// Matplotlib's tab10: distinct on white, in the order people know from other plots.
const QColor kPalette[] = {QColor(31, 119, 180),  QColor(255, 127, 14),  QColor(44, 160, 44),
                           QColor(214, 39, 40),   QColor(148, 103, 189), QColor(140, 86, 75),
                           QColor(227, 119, 194), QColor(127, 127, 127), QColor(188, 189, 34),
                           QColor(23, 190, 207)};

}  // namespace

RunsModel::RunsModel(RunHistory* history, RunTracker* tracker, QObject* parent)
    : QAbstractTableModel(parent), history_(history), tracker_(tracker) {
    reload();
    if (tracker_ == nullptr) return;
    connect(tracker_, &RunTracker::run_added, this, [this](int key) { track(key); });
    connect(tracker_, &RunTracker::run_changed, this, &RunsModel::on_run_changed);
    connect(tracker_, &RunTracker::run_released, this, &RunsModel::on_run_released);
    for (int key : tracker_->keys())
        track(key);
}

QColor RunsModel::color_of(int key) {
    return kPalette[static_cast<size_t>(key > 0 ? key - 1 : 0) % std::size(kPalette)];
}

QString RunsModel::state_text(const RunRecord& r) {
    QString text = r.state_detail.isEmpty()
                       ? display_text(r.state)
                       : runs_page_text("%1 (%2)").arg(display_text(r.state), r.state_detail);
    if (r.restarts > 0) text += runs_page_text(", restarts: %1").arg(r.restarts);
    return text;
}

void RunsModel::read_points(Row& row, const Row* before) const {
    row.points = -1;
    row.curve.clear();
    if (history_ == nullptr || !row.record) return;
    const int64_t id = row.record->id;
    const Result<int64_t> points = history_->point_count(id);
    row.points = points.ok() ? *points : -1;
    if (before != nullptr && before->points == row.points) {
        row.curve = before->curve;
    } else if (row.points > 1) {
        const Result<std::vector<double>> values =
            history_->sampled_values(id, Metric::kTrainLoss, kCurvePoints);
        if (values.ok()) row.curve = QList<double>(values->begin(), values->end());
    }
}

bool RunsModel::same_cells(const Row& a, const Row& b) const {
    if (a.record.has_value() != b.record.has_value()) return false;
    if (a.record) {
        const RunRecord &x = *a.record, &y = *b.record;
        if (!(x.name == y.name && x.cluster == y.cluster && x.job_id == y.job_id && x.state == y.state &&
              x.state_detail == y.state_detail && x.restarts == y.restarts && x.created == y.created &&
              x.started == y.started && x.finished == y.finished))
            return false;
    }
    return a.points == b.points && a.curve == b.curve;
}

void RunsModel::changed(int row) {
    emit dataChanged(index(row, 0), index(row, kColumnCount - 1));
}

void RunsModel::insert(Row row) {
    const int at = static_cast<int>(rows_.size());  // each view orders its rows itself
    beginInsertRows(QModelIndex(), at, at);
    rows_.push_back(std::move(row));
    endInsertRows();
}

void RunsModel::remove(int row) {
    beginRemoveRows(QModelIndex(), row, row);
    rows_.erase(rows_.begin() + row);
    endRemoveRows();
}

void RunsModel::reload() {
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
        Row& row = rows_[static_cast<size_t>(i)];
        if (!row.record || wanted.count(row.record->id) != 0) continue;
        if (!row.tracked) {
            remove(i);
            continue;
        }
        row.record.reset();  // deleted while the monitor shows it: the monitor keeps it, the Runs page not
        read_points(row, nullptr);
        changed(i);
    }
    for (const RunRecord& record : now) {
        int at = row_of(record.id);
        if (at < 0) at = row_awaiting(record.id);  // a tracked run whose row the store now has
        if (at < 0) {
            Row row;
            row.record = record;
            read_points(row, nullptr);
            insert(std::move(row));
            continue;
        }
        Row& row = rows_[static_cast<size_t>(at)];
        Row fresh;
        fresh.record = record;
        read_points(fresh, &row);
        const bool same = same_cells(fresh, row);
        row.record = record;  // what no cell shows (its log offset, its config) stays current too
        row.points = fresh.points;
        row.curve = std::move(fresh.curve);
        if (!same) changed(at);
    }
}

bool RunsModel::track(int key) {
    if (row_of_tracked(key) >= 0) return true;
    const TrackedRun* run = tracker_ != nullptr ? tracker_->run(key) : nullptr;
    if (run == nullptr) return false;
    const Tracked tracked{key, next_order_++, true};
    if (const int stored = run->store_id != 0 ? row_of(run->store_id) : -1;
        stored >= 0 && !rows_[static_cast<size_t>(stored)].tracked) {
        rows_[static_cast<size_t>(stored)].tracked = tracked;
        changed(stored);
        return true;
    }
    Row row;
    row.tracked = tracked;
    insert(std::move(row));
    return true;
}

void RunsModel::join_stored(int at) {
    Row& row = rows_[static_cast<size_t>(at)];
    const TrackedRun* run = tracker_->run(row.tracked->key);
    if (run == nullptr || run->store_id == 0 || row.record) return;
    const int stored = row_of(run->store_id);
    if (stored < 0 || rows_[static_cast<size_t>(stored)].tracked) return;
    // The tracked row takes the stored one in: the monitor's row (its current run) stays. The stored row
    // came with the store's last change, too new for the Runs page to have made it current.
    row.record = std::move(rows_[static_cast<size_t>(stored)].record);
    row.points = rows_[static_cast<size_t>(stored)].points;
    row.curve = std::move(rows_[static_cast<size_t>(stored)].curve);
    changed(at);
    remove(stored);
}

void RunsModel::on_run_changed(int key) {
    if (const int at = row_of_tracked(key); at >= 0) {
        changed(at);
        join_stored(at);
    }
}

void RunsModel::on_run_released(int key) {
    const int at = row_of_tracked(key);
    if (at < 0) return;
    Row& row = rows_[static_cast<size_t>(at)];
    if (!row.record) {
        remove(at);
        return;
    }
    row.tracked.reset();
    changed(at);
}

void RunsModel::set_shown(int key, bool shown) {
    const int at = row_of_tracked(key);
    if (at < 0 || rows_[static_cast<size_t>(at)].tracked->shown == shown) return;
    rows_[static_cast<size_t>(at)].tracked->shown = shown;
    emit dataChanged(index(at, kNameColumn), index(at, kNameColumn), {Qt::CheckStateRole});
    emit shown_changed(key, shown);
}

bool RunsModel::is_shown(int key) const {
    const int at = row_of_tracked(key);
    return at < 0 || rows_[static_cast<size_t>(at)].tracked->shown;
}

int RunsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RunsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : kColumnCount;
}

const RunRecord* RunsModel::record(int row) const {
    if (row < 0 || row >= static_cast<int>(rows_.size())) return nullptr;
    const std::optional<RunRecord>& r = rows_[static_cast<size_t>(row)].record;
    return r ? &*r : nullptr;
}

int64_t RunsModel::run_id(int row) const {
    const RunRecord* r = record(row);
    return r != nullptr ? r->id : 0;
}

int RunsModel::row_of(int64_t run_id) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].record && rows_[i].record->id == run_id) return static_cast<int>(i);
    return -1;
}

int RunsModel::row_of_tracked(int key) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].tracked && rows_[i].tracked->key == key) return static_cast<int>(i);
    return -1;
}

int RunsModel::row_awaiting(int64_t run_id) const {
    if (tracker_ == nullptr) return -1;
    for (size_t i = 0; i < rows_.size(); ++i) {
        if (rows_[i].record || !rows_[i].tracked) continue;
        const TrackedRun* run = tracker_->run(rows_[i].tracked->key);
        if (run != nullptr && run->store_id == run_id) return static_cast<int>(i);
    }
    return -1;
}

QString RunsModel::name_of(const Row& row) const {
    const TrackedRun* run = row.tracked && tracker_ != nullptr ? tracker_->run(row.tracked->key) : nullptr;
    if (run != nullptr) return run->name;
    return row.record ? row.record->name : QString();
}

// A tracked run's state is the tracker's, which is ahead of the store's row (the store is written after it
// changes, and read back at the next reload).
QString RunsModel::state_of(const Row& row) const {
    const TrackedRun* run = row.tracked && tracker_ != nullptr ? tracker_->run(row.tracked->key) : nullptr;
    if (run == nullptr) return row.record ? state_text(*row.record) : QString();
    RunRecord shown = row.record.value_or(RunRecord{});
    shown.state = run->state;
    shown.state_detail = run->state_detail;
    return state_text(shown);
}

QVariant RunsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
    const Row& row = rows_[static_cast<size_t>(index.row())];
    const RunRecord* r = row.record ? &*row.record : nullptr;
    const TrackedRun* run = row.tracked && tracker_ != nullptr ? tracker_->run(row.tracked->key) : nullptr;
    const int column = index.column();
    switch (role) {
        case kRunIdRole:
            return static_cast<qlonglong>(r != nullptr ? r->id : 0);
        case kTrackerKeyRole:
            return row.tracked ? row.tracked->key : 0;
        case kTrackedOrderRole:
            return row.tracked ? row.tracked->order : 0;
        case kCurveRole:
            return column == kLossColumn ? QVariant::fromValue(row.curve) : QVariant();
        case Qt::DecorationRole:  // a tracked run's swatch: the colour of its curves in the monitor
            return column == kNameColumn && row.tracked ? QVariant(color_of(row.tracked->key)) : QVariant();
        case Qt::CheckStateRole:
            if (column != kNameColumn || !row.tracked) return {};
            return row.tracked->shown ? Qt::Checked : Qt::Unchecked;
        case Qt::ToolTipRole:
            // The monitor's list is narrow: the whole name and the state are in the name's tooltip.
            if (column == kNameColumn && run != nullptr) {
                return run->state_detail.isEmpty()
                           ? monitor_text("%1: %2").arg(run->name, display_text(run->state))
                           : monitor_text("%1: %2 (%3)")
                                 .arg(run->name, display_text(run->state), run->state_detail);
            }
            if (column == kLossColumn)
                return row.curve.isEmpty()
                           ? QVariant()
                           : QVariant(runs_page_text("last train_loss %1").arg(row.curve.back()));
            break;
        case kSortRole:
            switch (column) {
                case kIdColumn:
                    return static_cast<qlonglong>(r != nullptr ? r->id : 0);
                case kJobColumn:
                    return data(index, Qt::DisplayRole).toString().toLongLong();  // a Slurm job or a pid
                case kLossColumn:
                    return row.curve.isEmpty() ? QVariant() : QVariant(row.curve.back());
                case kStartedColumn:
                    return r != nullptr ? QVariant(started_of(*r)) : QVariant();
                case kFinishedColumn:
                    return r != nullptr ? QVariant(r->finished) : QVariant();
                case kPointsColumn:
                    return static_cast<qlonglong>(row.points);
                default:
                    break;
            }
            break;
        case Qt::DisplayRole:
            break;
        default:
            return {};
    }
    switch (column) {
        case kIdColumn:
            return r != nullptr ? QString::number(r->id) : QString();
        case kNameColumn:
            return name_of(row);
        case kClusterColumn:
            return where_text(run != nullptr ? run->profile : r != nullptr ? r->cluster : QString());
        case kJobColumn:
            return run != nullptr ? run->job_id : r != nullptr ? r->job_id : QString();
        case kStateColumn:
            return state_of(row);
        case kLossColumn:
            return {};
        case kStartedColumn:
            return r != nullptr ? time_text(started_of(*r)) : QString();
        case kFinishedColumn:
            return r != nullptr ? time_text(r->finished) : QString();
        case kPointsColumn:
            return row.points >= 0 ? QString::number(row.points) : QString();
        default:
            return {};
    }
}

bool RunsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || role != Qt::CheckStateRole || index.column() != kNameColumn) return false;
    const Row& row = rows_[static_cast<size_t>(index.row())];
    if (!row.tracked) return false;
    set_shown(row.tracked->key, static_cast<Qt::CheckState>(value.toInt()) == Qt::Checked);
    return true;
}

Qt::ItemFlags RunsModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == kNameColumn && rows_[static_cast<size_t>(index.row())].tracked)
        flags |= Qt::ItemIsUserCheckable;
    return flags;
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const {
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
