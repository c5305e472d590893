// RunsPage: a table over RunHistory::runs().
#include "runs_page.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "history/run_history.h"
#include "runs/run_tracker.h"

namespace slipway::app {
namespace {

QString time_text(const QDateTime& t) {
    return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QString();
}

// Where a run ran, for the Cluster column: a profile's name as it is; the stored words for an opened log file
// and This computer translated.
QString where_text(const QString& cluster) {
    if (cluster == kOpenedLogSource) return RunsPage::tr("log file");
    if (cluster == kLocalProfile) return RunsPage::tr("This computer");
    return cluster;
}

}  // namespace

RunsPage::RunsPage(RunHistory* history, QWidget* parent) : QWidget(parent), history_(history) {
    table_ = new QTableWidget(this);
    table_->setColumnCount(8);
    table_->setHorizontalHeaderLabels({tr("Id"), tr("Name"), tr("Cluster"), tr("Job"), tr("State"),
                                       tr("Started"), tr("Finished"), tr("Points")});
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);

    show_ = new QPushButton(tr("Show in monitor"), this);
    follow_ = new QPushButton(tr("Resume following"), this);
    follow_->setToolTip(tr("Follow the run's log again from where the history stopped reading it"));
    edit_ = new QPushButton(tr("Open config in editor"), this);
    delete_ = new QPushButton(tr("Delete"), this);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(show_);
    buttons->addWidget(follow_);
    buttons->addWidget(edit_);
    buttons->addStretch(1);
    buttons->addWidget(delete_);

    auto* layout = new QVBoxLayout(this);
    auto* title = new QLabel(tr("<b>Runs</b> (history: %1)")
                                 .arg(history_ != nullptr ? tr("kept across restarts") : tr("not available")),
                             this);
    layout->addWidget(title);
    layout->addWidget(table_, 1);
    layout->addLayout(buttons);

    connect(table_, &QTableWidget::cellDoubleClicked, this, [this] {
        if (const int64_t id = selected_run()) emit show_requested(id);
    });
    connect(show_, &QPushButton::clicked, this, [this] {
        if (const int64_t id = selected_run()) emit show_requested(id);
    });
    connect(follow_, &QPushButton::clicked, this, [this] {
        if (const int64_t id = selected_run()) emit follow_requested(id);
    });
    connect(edit_, &QPushButton::clicked, this, [this] {
        if (const int64_t id = selected_run()) emit edit_requested(id);
    });
    connect(delete_, &QPushButton::clicked, this, [this] {
        const int64_t id = selected_run();
        if (id == 0 || history_ == nullptr) return;
        if (QMessageBox::question(this, tr("Delete run"),
                                  tr("Delete run %1 and its points from the history?").arg(id)) !=
            QMessageBox::Yes) {
            return;
        }
        emit delete_requested(id);  // the tracker deletes it (releasing it if shown); the page reloads then
    });
    reload();
}

int64_t RunsPage::selected_run() const {
    const int row = table_->currentRow();
    if (row < 0 || table_->item(row, 0) == nullptr) return 0;
    return table_->item(row, 0)->data(Qt::UserRole).toLongLong();
}

void RunsPage::reload() {
    const int64_t selected = selected_run();
    table_->setRowCount(0);
    if (history_ == nullptr) return;
    const Result<std::vector<RunRecord>> runs = history_->runs();
    if (!runs.ok()) return;
    table_->setRowCount(static_cast<int>(runs->size()));
    int row = 0;
    for (const RunRecord& r : *runs) {
        const Result<int64_t> points = history_->point_count(r.id);
        const QStringList cells = {QString::number(r.id),
                                   r.name,
                                   where_text(r.cluster),
                                   r.job_id,
                                   r.state_detail.isEmpty()
                                       ? display_text(r.state)
                                       : tr("%1 (%2)").arg(display_text(r.state), r.state_detail),
                                   time_text(r.started.isValid() ? r.started : r.created),
                                   time_text(r.finished),
                                   points.ok() ? QString::number(*points) : QString()};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setData(Qt::UserRole, static_cast<qlonglong>(r.id));
            table_->setItem(row, c, item);
        }
        if (r.id == selected) table_->selectRow(row);
        ++row;
    }
    table_->resizeColumnsToContents();
}

}  // namespace slipway::app
