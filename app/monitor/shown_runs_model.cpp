// ShownRunsModel (shown_runs_model.h).
#include "monitor/shown_runs_model.h"

namespace slipway::app {

void ShownRunsModel::add(int key, const QString& name, const QColor& color) {
    if (row_of(key) >= 0) return;
    const int row = static_cast<int>(rows_.size());
    beginInsertRows(QModelIndex(), row, row);
    rows_.push_back(Row{key, name, name, color, true});
    endInsertRows();
}

void ShownRunsModel::remove(int key) {
    const int row = row_of(key);
    if (row < 0) return;
    beginRemoveRows(QModelIndex(), row, row);
    rows_.erase(rows_.begin() + row);
    endRemoveRows();
}

void ShownRunsModel::set_tooltip(int key, const QString& text) {
    const int row = row_of(key);
    if (row < 0 || rows_[static_cast<size_t>(row)].tooltip == text) return;
    rows_[static_cast<size_t>(row)].tooltip = text;
    emit dataChanged(index(row), index(row), {Qt::ToolTipRole});
}

void ShownRunsModel::set_shown(int key, bool shown) {
    const int row = row_of(key);
    if (row < 0 || rows_[static_cast<size_t>(row)].shown == shown) return;
    rows_[static_cast<size_t>(row)].shown = shown;
    emit dataChanged(index(row), index(row), {Qt::CheckStateRole});
    emit shown_changed(key, shown);
}

bool ShownRunsModel::is_shown(int key) const {
    const int row = row_of(key);
    return row < 0 || rows_[static_cast<size_t>(row)].shown;
}

int ShownRunsModel::row_of(int key) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].key == key) return static_cast<int>(i);
    return -1;
}

int ShownRunsModel::key_at(int row) const {
    return row >= 0 && row < static_cast<int>(rows_.size()) ? rows_[static_cast<size_t>(row)].key : 0;
}

int ShownRunsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ShownRunsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
    const Row& row = rows_[static_cast<size_t>(index.row())];
    switch (role) {
        case Qt::DisplayRole:
            return row.name;
        case Qt::ToolTipRole:
            return row.tooltip;
        case Qt::DecorationRole:
            return row.color;  // the view draws it as the curve's swatch
        case Qt::CheckStateRole:
            return row.shown ? Qt::Checked : Qt::Unchecked;
        case kRunKeyRole:
            return row.key;
        default:
            return {};
    }
}

bool ShownRunsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || role != Qt::CheckStateRole) return false;
    set_shown(key_at(index.row()), static_cast<Qt::CheckState>(value.toInt()) == Qt::Checked);
    return true;
}

Qt::ItemFlags ShownRunsModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable;
}

}  // namespace slipway::app
