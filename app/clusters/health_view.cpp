// HealthView (see health_view.h).
#include "clusters/health_view.h"

#include <QColor>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "clusters/job_output.h"

namespace slipway::app {
namespace {

QString text(const std::string& s) {
    return QString::fromStdString(s);
}

QColor verdict_colour(remote::NodeVerdict verdict) {
    switch (verdict) {
        case remote::NodeVerdict::kOk:
            return QColor(0x2e, 0x7d, 0x32);
        case remote::NodeVerdict::kSlow:
            return QColor(0xef, 0x6c, 0x00);
        case remote::NodeVerdict::kFailed:
            return QColor(0xc6, 0x28, 0x28);
    }
    return QColor();
}

// A doctor's progress: a few lines per node.
constexpr int kOutputLines = 2000;

QString gbps(double value) {
    return QString::number(value, 'f', value >= 10 ? 0 : 2);
}

}  // namespace

HealthView::HealthView(QWidget* parent) : QWidget(parent) {
    partition_ = new QLineEdit(this);
    partition_->setPlaceholderText(tr("Slurm's default partition"));
    nodelist_ = new QLineEdit(this);
    nodelist_->setPlaceholderText(tr("every usable node of the partition (or: n01,n02)"));
    deadline_ = new QSpinBox(this);
    deadline_->setRange(0, 24 * 3600);
    deadline_->setSuffix(tr(" s"));
    deadline_->setSpecialValueText(tr("the job's time limit + 5 min"));
    deadline_->setToolTip(
        tr("A job still queued or running then is cancelled and judged on what it printed."));
    image_ = new QLineEdit(this);
    image_->setPlaceholderText(tr("the container image the checks run in"));
    run_ = new QPushButton(tr("Run doctor"), this);
    run_->setToolTip(
        tr("A short Slurm job checks each node: GPUs, bandwidth within and across nodes, the "
           "rendezvous port (slipway doctor)."));
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setToolTip(tr("Cancels the doctor's Slurm job (scancel)."));
    cancel_->setEnabled(false);
    output_ = new JobOutput(kOutputLines, 120, this);
    auto* form = new QFormLayout;
    form->addRow(tr("Partition"), partition_);
    form->addRow(tr("Nodes"), nodelist_);
    form->addRow(tr("Deadline"), deadline_);
    image_label_ = new QLabel(tr("Image"), this);
    form->addRow(image_label_, image_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(run_);
    buttons->addWidget(cancel_);
    buttons->addStretch(1);
    connect(run_, &QPushButton::clicked, this, &HealthView::run_requested);
    connect(cancel_, &QPushButton::clicked, this, &HealthView::cancel_requested);

    summary_ = new QLabel(this);
    summary_->setTextFormat(Qt::RichText);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    table_ = new QTableWidget(0, 7, this);
    table_->setHorizontalHeaderLabels({tr("Node"), tr("Verdict"), tr("busbw GB/s"), tr("Expected"),
                                       tr("GPUs"), tr("Rendezvous"), tr("Reasons")});
    table_->verticalHeader()->hide();
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->horizontalHeader()->setStretchLastSection(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel(tr("<b>Health</b>"), this));
    layout->addLayout(form);
    layout->addLayout(buttons);
    layout->addWidget(output_);
    layout->addWidget(summary_);
    layout->addWidget(table_, 1);
}

void HealthView::show_cluster(const remote::ClusterProfile& profile) {
    const std::string& cluster = profile.name;
    if (cluster != cluster_) {
        cluster_ = cluster;
        // The CLI's defaults: the profile's partition, every usable node, the job's time + 5 minutes.
        const DoctorOptions defaults;
        partition_->setText(text(profile.default_partition));
        nodelist_->clear();
        deadline_->setValue(defaults.deadline_s);
        image_->clear();
        const bool takes_image = remote::takes_image(profile.container);
        image_label_->setVisible(takes_image);
        image_->setVisible(takes_image);
        output_->clear();
        set_running(false);
    }
    Result<remote::DoctorReport> report = remote::DoctorReportStore().load(cluster);
    if (report.ok()) {
        show_report(*report);
        return;
    }
    table_->setRowCount(0);
    table_->hide();
    summary_->setText(
        report.code() == StatusCode::kNotFound
            ? tr("No health report yet. Run doctor (or <code>slipway doctor %1</code>) checks every node "
                 "(GPUs, bandwidth within and across nodes, the rendezvous port) and saves one here.")
                  .arg(text(cluster).toHtmlEscaped())
            : QStringLiteral("<span style='color:#c62828'>%1</span>")
                  .arg(text(report.error()).toHtmlEscaped()));
}

void HealthView::show_report(const remote::DoctorReport& r) {
    const std::vector<std::string> bad = r.bad_nodes();
    QStringList excluded;
    for (const std::string& node : bad)
        excluded << text(node);
    QString summary =
        tr("Job %1 at %2, %3 x %4 ranks per node, expected busbw %5 GB/s within a node (%6). Across nodes: "
           "%7.")
            .arg(text(r.job_id).toHtmlEscaped(), text(r.created).toHtmlEscaped(),
                 text(r.backend.empty() ? "?" : r.backend).toHtmlEscaped())
            .arg(r.ranks_per_node)
            .arg(gbps(r.expected_intra_gbps), text(r.fabric).toHtmlEscaped(),
                 (r.inter_busbw_gbps ? gbps(*r.inter_busbw_gbps) + QStringLiteral(" GB/s, ") : QString()) +
                     text(r.inter_check).toHtmlEscaped());
    summary += QStringLiteral("<br>") +
               (bad.empty() ? tr("<span style='color:#2e7d32'>Every node ok.</span>")
                            : tr("<span style='color:#c62828'>Exclude: %1</span> (<code>slipway submit "
                                 "--exclude-bad</code> leaves them out).")
                                  .arg(excluded.join(QStringLiteral(", ")).toHtmlEscaped()));
    for (const std::string& p : r.problems)
        summary += QStringLiteral("<br>") + tr("Problem: %1").arg(text(p).toHtmlEscaped());
    summary_->setText(summary);

    table_->setRowCount(static_cast<int>(r.nodes.size()));
    for (int row = 0; row < static_cast<int>(r.nodes.size()); ++row) {
        const remote::NodeHealth& n = r.nodes[static_cast<size_t>(row)];
        QStringList reasons;
        for (const std::string& reason : n.reasons)
            reasons << text(reason);
        const QStringList cells = {text(n.node),
                                   text(remote::verdict_name(n.verdict)),
                                   n.intra_busbw_gbps ? gbps(*n.intra_busbw_gbps) : QStringLiteral("-"),
                                   gbps(r.expected_intra_gbps),
                                   text(n.gpu_check),
                                   n.rendezvous.empty() ? QStringLiteral("-") : text(n.rendezvous),
                                   reasons.join(QStringLiteral("; "))};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setToolTip(cells[c]);
            if (c == 1) item->setForeground(verdict_colour(n.verdict));
            table_->setItem(row, c, item);
        }
    }
    table_->resizeColumnsToContents();
    table_->show();
}

DoctorOptions HealthView::doctor_options() const {
    DoctorOptions options;
    options.partition = partition_->text().trimmed().toStdString();
    for (const QString& node : nodelist_->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        if (!node.trimmed().isEmpty()) options.nodelist.push_back(node.trimmed().toStdString());
    }
    options.deadline_s = deadline_->value();
    options.image = image_->text().trimmed().toStdString();
    return options;
}

void HealthView::set_running(bool running) {
    for (QWidget* w : std::initializer_list<QWidget*>{partition_, nodelist_, deadline_, image_, run_})
        w->setEnabled(!running);
    cancel_->setEnabled(running);
    if (running) output_->start();
}

void HealthView::append_output(const QStringList& lines) {
    output_->append(lines);
}

void HealthView::show_result(bool ok, const QString& message) {
    output_->show_result(ok, message);
}

QString HealthView::summary_text() const {
    return summary_->text();
}

}  // namespace slipway::app
