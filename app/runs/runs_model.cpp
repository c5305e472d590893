// RunsModel (runs_model.h): the store's rows merged in at each reload, the tracker's runs joined to them as
// the tracker adds, changes and releases them.
#include "runs/runs_model.h"

#include <QCoreApplication>
#include <QDateTime>

#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include "core/run_state_display.h"
#include "runs/run_tracker.h"

namespace slipway::app {
namespace {

// The Runs page's and the monitor's words are translated in their contexts, where they always were; each is
// written out at its call (translate with literals, QT_TRANSLATE_NOOP) so that lupdate finds it.

QString time_text(const QDateTime& t) {
    return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QString();
}

// Where a run ran, for the Cluster column: a profile's name as it is; the stored words for an opened log file
// and This computer translated.
QString where_text(const QString& cluster) {
    if (cluster == QLatin1String(kOpenedLogCluster))
        return QCoreApplication::translate("slipway::app::RunsPage", "log file");
    if (cluster == QLatin1String(kLocalCluster))
        return QCoreApplication::translate("slipway::app::RunsPage", "This computer");
    return cluster;
}

// The State column: the state, what it does not say (node list, exit code), and how often a requeued job
// resumed.
QString state_text(RunState state, const std::string& detail, int restarts) {
    QString text = detail.empty()
                       ? display_text(state)
                       : QCoreApplication::translate("slipway::app::RunsPage", "%1 (%2)")
                             .arg(display_text(state), display_detail(QString::fromStdString(detail)));
    if (restarts > 0)
        text += QCoreApplication::translate("slipway::app::RunsPage", ", restarts: %1").arg(restarts);
    return text;
}

// A stored time (ms since the epoch, 0 when not known) as the views sort and show it.
QDateTime date_of(int64_t ms) {
    return ms != 0 ? QDateTime::fromMSecsSinceEpoch(ms) : QDateTime();
}

QDateTime started_of(const StoredRun& r) {
    return date_of(r.started_ms != 0 ? r.started_ms : r.created_ms);
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
        const StoredRun &x = *a.record, &y = *b.record;
        if (!(x.name == y.name && x.cluster == y.cluster && x.job_id == y.job_id && x.state == y.state &&
              x.state_detail == y.state_detail && x.restarts == y.restarts && x.created_ms == y.created_ms &&
              x.started_ms == y.started_ms && x.finished_ms == y.finished_ms))
            return false;
    }
    return a.points == b.points && a.curve == b.curve;
}

void RunsModel::report_row_changed(int row) {
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
    std::vector<StoredRun> now;
    if (history_ != nullptr) {
        Result<std::vector<StoredRun>> runs = history_->runs();
        if (!runs.ok()) return;  // keep what is shown; the store's writer reports its own problems
        now = std::move(*runs);
    }
    std::unordered_set<int64_t> wanted;
    for (const StoredRun& r : now)
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
        row.tracked->cells = cells_of(row);
        report_row_changed(i);
    }
    // Each stored id's row: its stored row, or the tracked row awaiting it (the tracker knows the run by it).
    std::unordered_map<int64_t, size_t> row_for;
    for (size_t i = 0; i < rows_.size(); ++i) {
        if (rows_[i].record) {
            row_for[rows_[i].record->id] = i;
        } else if (const TrackedRun* run = tracked_run(rows_[i]); run != nullptr && run->store_id != 0) {
            row_for.emplace(run->store_id, i);  // a stored row of the id wins
        }
    }
    for (const StoredRun& record : now) {
        const auto found = row_for.find(record.id);
        const int at = found != row_for.end() ? static_cast<int>(found->second) : -1;
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
        bool tracked_cells_changed = false;
        if (row.tracked) {
            QStringList cells = cells_of(row);
            tracked_cells_changed = cells != row.tracked->cells;
            row.tracked->cells = std::move(cells);
        }
        if (!same || tracked_cells_changed) report_row_changed(at);
    }
    join_stored_rows();  // a run whose stored row came before the tracker knew its id
}

bool RunsModel::track(int key) {
    if (row_of_tracked(key) >= 0) return true;
    const TrackedRun* run = tracker_ != nullptr ? tracker_->run(key) : nullptr;
    if (run == nullptr) return false;
    Tracked tracked;
    tracked.key = key;
    tracked.order = next_order_++;
    tracked.store_id = run->store_id;
    if (const int stored = run->store_id != 0 ? row_of(run->store_id) : -1;
        stored >= 0 && !rows_[static_cast<size_t>(stored)].tracked) {
        Row& row = rows_[static_cast<size_t>(stored)];
        row.tracked = std::move(tracked);
        row.tracked->cells = cells_of(row);
        report_row_changed(stored);
        return true;
    }
    Row row;
    row.tracked = std::move(tracked);
    row.tracked->cells = cells_of(row);
    insert(std::move(row));
    return true;
}

void RunsModel::join_stored_rows() {
    for (size_t i = 0; i < rows_.size(); ++i) {
        if (rows_[i].record) continue;
        const TrackedRun* run = tracked_run(rows_[i]);
        const int stored = run != nullptr && run->store_id != 0 ? row_of(run->store_id) : -1;
        if (stored < 0 || rows_[static_cast<size_t>(stored)].tracked) continue;
        join(static_cast<int>(i), stored);
        i = static_cast<size_t>(-1);  // rows moved: look again from the top (the loop's ++ makes it 0)
    }
}

void RunsModel::join(int tracked_row, int stored_row) {
    // The tracked part moves onto the stored row as a layout change: the persistent indexes on the tracked
    // row (the monitor's current run) move with it, those on the stored row (the Runs page's selection) stay.
    emit layoutAboutToBeChanged();
    Row& from = rows_[static_cast<size_t>(tracked_row)];
    Row& to = rows_[static_cast<size_t>(stored_row)];
    to.tracked = std::move(from.tracked);
    from.tracked.reset();
    to.tracked->cells = cells_of(to);
    for (int c = 0; c < kColumnCount; ++c)
        changePersistentIndex(index(tracked_row, c), index(stored_row, c));
    emit layoutChanged();
    remove(tracked_row);  // neither stored nor tracked now: in no view
}

void RunsModel::on_run_changed(int key) {
    const int at = row_of_tracked(key);
    if (at < 0) return;
    Row& row = rows_[static_cast<size_t>(at)];
    QStringList cells = cells_of(row);
    if (cells != row.tracked->cells) {
        row.tracked->cells = std::move(cells);
        report_row_changed(at);
    }
    const TrackedRun* run = tracked_run(row);
    if (run != nullptr && run->store_id != row.tracked->store_id) {
        row.tracked->store_id = run->store_id;
        join_stored_rows();
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
    report_row_changed(at);  // its state is the store's again, and its swatch goes
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

const StoredRun* RunsModel::record(int row) const {
    if (row < 0 || row >= static_cast<int>(rows_.size())) return nullptr;
    const std::optional<StoredRun>& r = rows_[static_cast<size_t>(row)].record;
    return r ? &*r : nullptr;
}

int64_t RunsModel::run_id(int row) const {
    const StoredRun* r = record(row);
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

const TrackedRun* RunsModel::tracked_run(const Row& row) const {
    return row.tracked && tracker_ != nullptr ? tracker_->run(row.tracked->key) : nullptr;
}

bool RunsModel::tracker_says_state(const Row& row) const {
    const TrackedRun* run = tracked_run(row);
    return run != nullptr && (!row.record || run->live || run->state_from_store);
}

QString RunsModel::text_of(const Row& row, int column) const {
    const StoredRun* r = row.record ? &*row.record : nullptr;
    const TrackedRun* run = tracked_run(row);
    // Where the tracker says the state it is ahead of the stored row (written after the change, read back
    // at the next reload); a stored run it only shows is the store's.
    const TrackedRun* live = tracker_says_state(row) ? run : nullptr;
    switch (column) {
        case kIdColumn:
            return r != nullptr ? QString::number(r->id) : QString();
        case kNameColumn:
            return QString::fromStdString(r != nullptr     ? r->name
                                          : run != nullptr ? run->name
                                                           : std::string());
        case kClusterColumn:
            return where_text(QString::fromStdString(r != nullptr     ? r->cluster
                                                     : run != nullptr ? run->profile
                                                                      : std::string()));
        case kJobColumn:
            if (live != nullptr && !live->job_id.empty()) return QString::fromStdString(live->job_id);
            return r != nullptr ? QString::fromStdString(r->job_id) : QString();
        case kStateColumn:
            if (live != nullptr)
                return state_text(live->state, live->state_detail, r != nullptr ? r->restarts : 0);
            return r != nullptr ? state_text(r->state, r->state_detail, r->restarts) : QString();
        case kStartedColumn:
            return r != nullptr ? time_text(started_of(*r)) : QString();
        case kFinishedColumn:
            return r != nullptr ? time_text(date_of(r->finished_ms)) : QString();
        case kPointsColumn:
            return row.points >= 0 ? QString::number(row.points) : QString();
        default:
            return {};
    }
}

QString RunsModel::tooltip_of(const Row& row) const {
    // The monitor's list is narrow: a tracked run's whole name and its state (the State column's) are in the
    // name's tooltip.
    const TrackedRun* run = tracked_run(row);
    if (run == nullptr) return text_of(row, kNameColumn);
    return QCoreApplication::translate("slipway::app::MonitorWidget", "%1: %2")
        .arg(QString::fromStdString(run->name), text_of(row, kStateColumn));
}

QStringList RunsModel::cells_of(const Row& row) const {
    QStringList cells;
    for (int c = 0; c < kColumnCount; ++c)
        cells << text_of(row, c);
    cells << tooltip_of(row);
    return cells;
}

QVariant RunsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
    const Row& row = rows_[static_cast<size_t>(index.row())];
    const StoredRun* r = row.record ? &*row.record : nullptr;
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
            if (column == kNameColumn) return tooltip_of(row);
            if (column == kLossColumn)
                return row.curve.isEmpty() ? QVariant()
                                           : QVariant(QCoreApplication::translate("slipway::app::RunsPage",
                                                                                  "last train_loss %1")
                                                          .arg(row.curve.back()));
            break;
        case kSortRole:
            switch (column) {
                case kIdColumn:
                    return static_cast<qlonglong>(r != nullptr ? r->id : 0);
                case kJobColumn:
                    return text_of(row, column).toLongLong();  // a Slurm job or a pid
                case kLossColumn:
                    return row.curve.isEmpty() ? QVariant() : QVariant(row.curve.back());
                case kStartedColumn:
                    return r != nullptr ? QVariant(started_of(*r)) : QVariant();
                case kFinishedColumn:
                    return r != nullptr ? QVariant(date_of(r->finished_ms)) : QVariant();
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
    return column == kLossColumn ? QVariant() : QVariant(text_of(row, column));
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
    static const char* const kHeaders[kColumnCount] = {
        QT_TRANSLATE_NOOP("slipway::app::RunsPage", "Id"),
        QT_TRANSLATE_NOOP("slipway::app::RunsPage", "Name"),
        QT_TRANSLATE_NOOP("slipway::app::RunsPage", "Cluster"),
        QT_TRANSLATE_NOOP("slipway::app::RunsPage", "Job"),
        QT_TRANSLATE_NOOP("slipway::app::RunsPage", "State"),
        QT_TRANSLATE_NOOP("slipway::app::RunsPage", "train_loss"),
        QT_TRANSLATE_NOOP("slipway::app::RunsPage", "Started"),
        QT_TRANSLATE_NOOP("slipway::app::RunsPage", "Finished"),
        QT_TRANSLATE_NOOP("slipway::app::RunsPage", "Points")};
    return section >= 0 && section < kColumnCount
               ? QCoreApplication::translate("slipway::app::RunsPage", kHeaders[section])
               : QVariant();
}

}  // namespace slipway::app
