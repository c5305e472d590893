// RemoteBrowser: folder listings requested from the cluster's worker, the latest one shown.
#include "clusters/remote_browser.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "clusters/cluster_session.h"

namespace slipway::app {

RemoteBrowser::RemoteBrowser(ClusterSession* session, bool folder, const QString& start, QWidget* parent)
    : QDialog(parent), session_(session), folder_(folder) {
    setWindowTitle(folder ? tr("Choose a folder on %1").arg(QString::fromStdString(session->profile().name))
                          : tr("Choose a file on %1").arg(QString::fromStdString(session->profile().name)));
    resize(640, 480);
    path_ = new QLineEdit(this);
    auto* up = new QPushButton(tr("Up"), this);
    auto* row = new QHBoxLayout;
    row->addWidget(path_, 1);
    row->addWidget(up);
    list_ = new QListWidget(this);
    status_ = new QLabel(this);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(row);
    layout->addWidget(list_, 1);
    layout->addWidget(status_);
    layout->addWidget(buttons);

    connect(path_, &QLineEdit::returnPressed, this, [this] { open_dir(path_->text()); });
    connect(up, &QPushButton::clicked, this, [this] {
        const int slash = dir_.lastIndexOf(QLatin1Char('/'));
        open_dir(slash > 0 ? dir_.left(slash) : QStringLiteral("/"));
    });
    connect(list_, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem* item) {
        const QString name = item->text();
        if (name.endsWith(QLatin1Char('/'))) {
            open_dir((dir_ == QLatin1String("/") ? QString() : dir_) + QLatin1Char('/') + name.chopped(1));
        } else if (!folder_) {
            chosen_ = dir_ + QLatin1Char('/') + name;
            accept();
        }
    });
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        const QListWidgetItem* item = list_->currentItem();
        if (folder_) {
            chosen_ = item != nullptr && item->text().endsWith(QLatin1Char('/'))
                          ? dir_ + QLatin1Char('/') + item->text().chopped(1)
                          : dir_;
        } else if (item != nullptr && !item->text().endsWith(QLatin1Char('/'))) {
            chosen_ = dir_ + QLatin1Char('/') + item->text();
        } else {
            return;  // a file must be picked
        }
        accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(
        session_, &ClusterSession::listed, this,
        [this](int request, bool ok, const QString& path, const QStringList& entries, const QString& error) {
            if (request != request_) return;  // an older listing: stale
            if (!ok) {
                status_->setText(tr("Cannot list %1: %2").arg(path, error));
                return;
            }
            dir_ = path;
            path_->setText(path);
            list_->clear();
            list_->addItems(entries);
            status_->setText(tr("%n entries", nullptr, entries.size()));
        });
    open_dir(start.isEmpty() ? QStringLiteral("~") : start);
}

void RemoteBrowser::open_dir(const QString& path) {
    status_->setText(tr("Listing %1...").arg(path));
    request_ = session_->list_dir(path);
}

}  // namespace slipway::app
