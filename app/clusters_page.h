// The clusters page: the profiles runs can be submitted to. "This computer" (the embedded default) runs
// slipway-engine locally; the page shows what it will run and where.
#pragma once

#include <QWidget>

class QLabel;
class QListWidget;

namespace slipway::app {

class ClustersPage : public QWidget {
    Q_OBJECT

public:
    ClustersPage(const QString& resource_root, const QString& runs_dir, QWidget* parent = nullptr);
    // Re-reads what the local profile depends on (the engine binary may appear after a build).
    void refresh();
    QListWidget* profiles() const { return profiles_; }
    QString details_text() const;

private:
    QString resource_root_;
    QString runs_dir_;
    QListWidget* profiles_;
    QLabel* details_;
};

}  // namespace slipway::app
