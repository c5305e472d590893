// RunsPage: a sortable, filtered view over the stored rows of the shared RunsModel, with a sparkline of each
// run's train_loss (sampled by SQLite, so a long run is not read whole) drawn by the view's delegate.
#include "runs_page.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "core/metrics_export.h"
#include "history/run_history.h"
#include "runs/runs_model.h"
#include "track/run_trackers.h"

namespace slipway::app {
namespace {

constexpr QSize kCurveSize(96, 22);

// The stored rows only (a run the monitor shows from a log without a stored row is not the history's); the
// filter box matches a run's name, cluster, job or state; the columns sort by RunsModel::kSortRole. A run in
// the monitor keeps its colour swatch here; whether it is shown there is the monitor's to say, not a check
// box of this table.
class RunsFilter : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

    QVariant data(const QModelIndex& index, int role) const override {
        return role == Qt::CheckStateRole ? QVariant() : QSortFilterProxyModel::data(index, role);
    }
    Qt::ItemFlags flags(const QModelIndex& index) const override {
        return QSortFilterProxyModel::flags(index) & ~Qt::ItemIsUserCheckable;
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
        if (sourceModel()->index(row, 0, parent).data(RunsModel::kRunIdRole).toLongLong() == 0) return false;
        const QString text = filterRegularExpression().pattern();
        if (text.isEmpty()) return true;
        for (int c : {RunsModel::kNameColumn, RunsModel::kClusterColumn, RunsModel::kJobColumn,
                      RunsModel::kStateColumn}) {
            if (sourceModel()->index(row, c, parent).data().toString().contains(text, Qt::CaseInsensitive))
                return true;
        }
        return false;
    }
};

// The train_loss column: a line through the row's sampled values (kCurveRole), scaled to the cell; nothing
// below two points.
class SparklineDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override {
        QStyledItemDelegate::paint(painter, option, index);  // selection background
        const QList<double> values = index.data(RunsModel::kCurveRole).value<QList<double>>();
        if (values.size() < 2) return;
        const QRectF box = QRectF(option.rect).adjusted(2, 2, -2, -2);
        const auto [low, high] = std::minmax_element(values.begin(), values.end());
        const double span = *high - *low > 0 ? *high - *low : 1.0;
        QPainterPath path;
        for (qsizetype i = 0; i < values.size(); ++i) {
            const QPointF p(
                box.left() + box.width() * static_cast<double>(i) / static_cast<double>(values.size() - 1),
                box.top() + box.height() * (*high - values[i]) / span);
            if (i == 0) {
                path.moveTo(p);
            } else {
                path.lineTo(p);
            }
        }
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setPen(QPen(QColor(31, 119, 180), 1.3));
        painter->drawPath(path);
        painter->restore();
    }
    QSize sizeHint(const QStyleOptionViewItem&, const QModelIndex&) const override { return kCurveSize; }
};

}  // namespace

RunsPage::RunsPage(RunHistory* history, RunsModel* model, QWidget* parent)
    : QWidget(parent), history_(history), model_(model) {
    proxy_ = new RunsFilter(this);
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(RunsModel::kSortRole);
    table_ = new QTableView(this);
    table_->setModel(proxy_);
    table_->setItemDelegateForColumn(RunsModel::kLossColumn, new SparklineDelegate(table_));
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setSortingEnabled(true);
    table_->sortByColumn(RunsModel::kIdColumn, Qt::DescendingOrder);  // newest first
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
    table_->horizontalHeader()->setSectionResizeMode(RunsModel::kNameColumn, QHeaderView::Stretch);

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
    export_metrics_ = new QPushButton(tr("Export metrics"), this);
    export_metrics_->setToolTip(tr("The selected run's curves where your team looks: TensorBoard or MLflow"));
    export_metrics_->setEnabled(history_ != nullptr);
    auto* export_menu = new QMenu(export_metrics_);
    export_metrics_->setMenu(export_menu);
    delete_ = new QPushButton(tr("Delete"), this);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(show_);
    buttons->addWidget(compare_);
    buttons->addWidget(follow_);
    buttons->addWidget(edit_);
    buttons->addWidget(chat_);
    buttons->addWidget(export_gguf_);
    buttons->addWidget(export_metrics_);
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

    connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
        proxy_->setFilterRegularExpression(QRegularExpression::escape(text.trimmed()));
        compare_->setEnabled(selected_runs().size() >= 2);
    });
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { compare_->setEnabled(selected_runs().size() >= 2); });
    connect(compare_, &QPushButton::clicked, this, [this] {
        if (const QList<qint64> ids = selected_runs(); ids.size() >= 2) emit compare_requested(ids);
    });
    connect(table_, &QTableView::doubleClicked, this, [this] {
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
    connect(export_menu->addAction(tr("To TensorBoard...")), &QAction::triggered, this, [this] {
        ask_and_export(track::ExportFormat::kTensorBoard, tr("TensorBoard log folder"),
                       QStringLiteral("tensorboard --logdir %1"));
    });
    connect(export_menu->addAction(tr("To MLflow...")), &QAction::triggered, this, [this] {
        ask_and_export(track::ExportFormat::kMlflow, tr("MLflow file store folder (mlruns)"),
                       QStringLiteral("MLFLOW_ALLOW_FILE_STORE=true mlflow ui --backend-store-uri %1"));
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
    QModelIndexList rows = table_->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(),
              [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
    QList<qint64> ids;
    for (const QModelIndex& row : rows)
        ids << row.data(RunsModel::kRunIdRole).toLongLong();
    return ids;
}

int64_t RunsPage::selected_run() const {
    const QModelIndex current = table_->currentIndex();
    return current.isValid() ? current.data(RunsModel::kRunIdRole).toLongLong() : 0;
}

int RunsPage::shown_rows() const {
    return proxy_->rowCount();
}

bool RunsPage::select_run(int64_t run_id) {
    const int row = model_->row_of(run_id);
    const QModelIndex shown = row < 0 ? QModelIndex() : proxy_->mapFromSource(model_->index(row, 0));
    if (!shown.isValid()) return false;
    table_->selectionModel()->setCurrentIndex(
        shown, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    return true;
}

namespace {

// A stored run's end as a run_stop, for the trackers that keep a status (MLflow); none while it may go on.
std::optional<RunEnd> run_end(const StoredRun& run) {
    switch (run.state) {
        case RunState::kCompleted:
            return RunEnd{true, run.finished_ms};
        case RunState::kFailed:
        case RunState::kCancelled:
        case RunState::kTimeout:
            return RunEnd{false, run.finished_ms};
        default:
            return std::nullopt;
    }
}

}  // namespace

void RunsPage::ask_and_export(track::ExportFormat format, const QString& folder_title,
                              const QString& command) {
    const int64_t id = selected_run();
    if (id == 0) return;
    const QString folder = QFileDialog::getExistingDirectory(this, folder_title);
    if (folder.isEmpty()) return;
    const Result<QString> written = export_metrics(id, format, folder);
    if (written.ok()) {
        QMessageBox::information(this, tr("Export metrics"),
                                 tr("Wrote %1\n\n%2").arg(*written, command.arg(folder)));
    } else {
        QMessageBox::warning(this, tr("Export metrics"), QString::fromStdString(written.error()));
    }
}

Result<QString> RunsPage::export_metrics(int64_t run_id, track::ExportFormat format,
                                         const QString& folder) const {
    if (history_ == nullptr) return Status::Error("no run history");
    const Result<StoredRun> run = history_->run(run_id);
    if (!run.ok()) return run.status();
    const Result<RunMetrics> metrics = history_->load_metrics(run_id);
    if (!metrics.ok()) return metrics.status();
    const std::string name =
        track::run_folder_name(run->name.empty() ? "run-" + std::to_string(run_id) : run->name);
    const Result<track::LogExport> written =
        app::export_run_metrics(*metrics, run_end(*run), format, folder.toStdString(), name);
    if (!written.ok()) return written.status();
    return QString::fromStdString(written->written);
}

void RunsPage::reload() {
    model_->reload();  // merged in: the view keeps its selection, current row and sort
    table_->resizeColumnsToContents();
    compare_->setEnabled(selected_runs().size() >= 2);
}

}  // namespace slipway::app
