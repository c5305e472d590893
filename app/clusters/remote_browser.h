// Choosing a file or folder on a cluster: a dialog that lists remote folders through the cluster's
// session (on its worker thread; the dialog never blocks), with Up, a path box, and double-click to enter.
#pragma once

#include <QDialog>

class QLabel;
class QLineEdit;
class QListWidget;

namespace slipway::app {

class ClusterSession;

class RemoteBrowser : public QDialog {
    Q_OBJECT

public:
    // `folder`: a folder is chosen (else a file). Starts at `start` (empty: the remote home).
    RemoteBrowser(ClusterSession* session, bool folder, const QString& start, QWidget* parent = nullptr);
    QString chosen() const { return chosen_; }
    QString current_dir() const { return dir_; }
    QListWidget* entries() const { return list_; }
    void open_dir(const QString& path);

private:
    ClusterSession* session_;
    bool folder_;
    int request_ = 0;  // the listing waited for; older answers are dropped
    QString dir_;
    QString chosen_;
    QLineEdit* path_;
    QListWidget* list_;
    QLabel* status_;
};

}  // namespace slipway::app
