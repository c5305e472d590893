// RunsPage: a table over RunHistory::runs(), filtered as the user types, with a sparkline of each run's
// train_loss (sampled by SQLite, so a long run is not read whole).
#include "runs_page.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

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

constexpr QSize kCurveSize(96, 22);
constexpr int kCurvePoints = 96;

// A line through `values`, scaled to the pixmap; a null pixmap below two points (nothing to draw).
QPixmap sparkline(const std::vector<double>& values) {
    if (values.size() < 2) return QPixmap();
    QPixmap pixmap(kCurveSize);
    pixmap.fill(Qt::transparent);
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    const double span = *high - *low > 0 ? *high - *low : 1.0;
    QPainterPath path;
    for (size_t i = 0; i < values.size(); ++i) {
        const QPointF p(1.0 + (kCurveSize.width() - 2.0) * static_cast<double>(i) / (values.size() - 1),
                        1.0 + (kCurveSize.height() - 2.0) * (*high - values[i]) / span);
        if (i == 0) {
            path.moveTo(p);
        } else {
            path.lineTo(p);
        }
    }
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(QColor(31, 119, 180), 1.3));
    painter.drawPath(path);
    return pixmap;
}

}  // namespace

// The state, what it does not say (node list, exit code), and how often a requeued job resumed.
QString RunsPage::state_text(const RunRecord& r) {
    QString text = r.state_detail.isEmpty() ? display_text(r.state)
                                            : tr("%1 (%2)").arg(display_text(r.state), r.state_detail);
    if (r.restarts > 0) text += tr(", restarts: %1").arg(r.restarts);
    return text;
}

RunsPage::RunsPage(RunHistory* history, QWidget* parent) : QWidget(parent), history_(history) {
    table_ = new QTableWidget(this);
    table_->setColumnCount(kColumnCount);
    table_->setHorizontalHeaderLabels({tr("Id"), tr("Name"), tr("Cluster"), tr("Job"), tr("State"),
                                       tr("train_loss"), tr("Started"), tr("Finished"), tr("Points")});
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setIconSize(kCurveSize);
    filter_ = new QLineEdit(this);
    filter_->setPlaceholderText(tr("Filter by name, cluster, job or state"));
    filter_->setClearButtonEnabled(true);
    compare_ = new QPushButton(tr("Compare selected"), this);
    compare_->setToolTip(
        tr("Overlay the selected runs' curves in the monitor (select several with Ctrl or Shift)"));
    compare_->setEnabled(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);

    show_ = new QPushButton(tr("Show in monitor"), this);
    follow_ = new QPushButton(tr("Resume following"), this);
    follow_->setToolTip(tr("Follow the run's log again from where the history stopped reading it"));
    edit_ = new QPushButton(tr("Open config in editor"), this);
    chat_ = new QPushButton(tr("Chat"), this);
    chat_->setToolTip(tr("Talk to the selected run's model (a completed run) on the Chat page"));
    export_gguf_ = new QPushButton(tr("Export GGUF..."), this);
    export_gguf_->setToolTip(
        tr("The selected run's model (LoRA merged) as one GGUF file for llama.cpp or Ollama (a model on this "
           "computer)"));
    delete_ = new QPushButton(tr("Delete"), this);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(show_);
    buttons->addWidget(compare_);
    buttons->addWidget(follow_);
    buttons->addWidget(edit_);
    buttons->addWidget(chat_);
    buttons->addWidget(export_gguf_);
    buttons->addStretch(1);
    buttons->addWidget(delete_);

    auto* layout = new QVBoxLayout(this);
    auto* title = new QLabel(tr("<b>Runs</b> (history: %1)")
                                 .arg(history_ != nullptr ? tr("kept across restarts") : tr("not available")),
                             this);
    layout->addWidget(title);
    layout->addWidget(filter_);
    layout->addWidget(table_, 1);
    layout->addLayout(buttons);

    connect(filter_, &QLineEdit::textChanged, this, &RunsPage::apply_filter);
    connect(table_, &QTableWidget::itemSelectionChanged, this,
            [this] { compare_->setEnabled(selected_runs().size() >= 2); });
    connect(compare_, &QPushButton::clicked, this, [this] {
        if (const QList<qint64> ids = selected_runs(); ids.size() >= 2) emit compare_requested(ids);
    });
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
    connect(chat_, &QPushButton::clicked, this, [this] {
        if (const int64_t id = selected_run()) emit chat_requested(id);
    });
    connect(export_gguf_, &QPushButton::clicked, this, [this] {
        if (const int64_t id = selected_run()) emit export_gguf_requested(id);
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

QList<qint64> RunsPage::selected_runs() const {
    QList<qint64> ids;
    for (int row = 0; row < table_->rowCount(); ++row) {
        const QTableWidgetItem* item = table_->item(row, kIdColumn);
        if (item != nullptr && item->isSelected() && !table_->isRowHidden(row))
            ids << item->data(Qt::UserRole).toLongLong();
    }
    return ids;
}

void RunsPage::apply_filter() {
    const QString text = filter_->text().trimmed();
    for (int row = 0; row < table_->rowCount(); ++row) {
        bool match = text.isEmpty();
        for (int c : {kNameColumn, kClusterColumn, kJobColumn, kStateColumn}) {
            const QTableWidgetItem* item = table_->item(row, c);
            match = match || (item != nullptr && item->text().contains(text, Qt::CaseInsensitive));
        }
        table_->setRowHidden(row, !match);
    }
    compare_->setEnabled(selected_runs().size() >= 2);
}

QPixmap RunsPage::loss_curve(int64_t run_id, int64_t points) {
    const auto cached = curves_.find(run_id);
    if (cached != curves_.end() && cached->second.first == points) return cached->second.second;
    const Result<std::vector<double>> values =
        history_->sampled_values(run_id, Metric::kTrainLoss, kCurvePoints);
    QPixmap curve = sparkline(values.ok() ? *values : std::vector<double>());
    curves_[run_id] = {points, curve};
    return curve;
}

int64_t RunsPage::selected_run() const {
    const int row = table_->currentRow();
    if (row < 0 || table_->item(row, 0) == nullptr) return 0;
    return table_->item(row, 0)->data(Qt::UserRole).toLongLong();
}

void RunsPage::reload() {
    const int64_t current = selected_run();
    const QList<qint64> selected = selected_runs();  // kept across a reload (the store changes live)
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
                                   state_text(r),
                                   QString(),
                                   time_text(r.started.isValid() ? r.started : r.created),
                                   time_text(r.finished),
                                   points.ok() ? QString::number(*points) : QString()};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setData(Qt::UserRole, static_cast<qlonglong>(r.id));
            table_->setItem(row, c, item);
        }
        if (points.ok() && *points > 0) {
            if (const QPixmap curve = loss_curve(r.id, *points); !curve.isNull())
                table_->item(row, kLossColumn)->setData(Qt::DecorationRole, curve);
        }
        if (r.id == current) table_->setCurrentCell(row, kIdColumn, QItemSelectionModel::NoUpdate);
        if (selected.contains(r.id)) {
            table_->selectionModel()->select(table_->model()->index(row, kIdColumn),
                                             QItemSelectionModel::Select | QItemSelectionModel::Rows);
        }
        ++row;
    }
    table_->resizeColumnsToContents();
    apply_filter();
}

}  // namespace slipway::app
