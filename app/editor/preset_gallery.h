// The presets gallery: one card per preset (its title, its one-paragraph description, and key figures
// read from its config: model, what trains, nodes x GPUs, global batch), to choose where a run starts.
// Activating a card (double-click, Enter) or "Use this preset" reports the choice; the editor loads it.
#pragma once

#include <QWidget>

#include "editor/presets.h"

class QListWidget;
class QPushButton;

namespace slipway::app {

class PresetGallery : public QWidget {
    Q_OBJECT

public:
    explicit PresetGallery(QWidget* parent = nullptr);

    // Shows these presets; `names` are how the editor's preset box names them (user ones say "(mine)").
    void set_presets(const QList<Preset>& presets, const QStringList& names);
    QListWidget* list() const { return list_; }
    // The card of the preset the box calls `name`, selected; false when there is none.
    bool select(const QString& name);

signals:
    void preset_chosen(const QString& name);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void fit_cards();  // each card as tall as its wrapped text at the list's width

    QListWidget* list_;
    QPushButton* use_;
};

}  // namespace slipway::app
