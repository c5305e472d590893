// ShownRunsModel: the monitor's runs as a list model, in the order they were added (the monitor's legend):
// each run's name with its colour swatch, checked while its curves are overlaid, its name and state as the
// tooltip. The one place that says whether a run is shown: the monitor asks is_shown() and hears a user's
// check through shown_changed; nothing is read back from item widgets.
#pragma once

#include <QAbstractListModel>
#include <QColor>
#include <QString>

#include <vector>

namespace slipway::app {

class ShownRunsModel : public QAbstractListModel {
    Q_OBJECT

public:
    static constexpr int kRunKeyRole = Qt::UserRole + 1;  // the tracker's key of the row's run (int)

    using QAbstractListModel::QAbstractListModel;

    // A new run at the end, shown.
    void add(int key, const QString& name, const QColor& color);
    void remove(int key);
    void set_tooltip(int key, const QString& text);
    // Emits shown_changed when it changes (a user's check comes here too, through setData).
    void set_shown(int key, bool shown);
    // Whether the run's curves are overlaid; a run not in the list counts as shown.
    bool is_shown(int key) const;
    int row_of(int key) const;  // -1 when not in the list
    int key_at(int row) const;  // 0 for a row out of range

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

signals:
    void shown_changed(int key, bool shown);

private:
    struct Row {
        int key = 0;
        QString name;
        QString tooltip;
        QColor color;
        bool shown = true;
    };
    std::vector<Row> rows_;
};

}  // namespace slipway::app
