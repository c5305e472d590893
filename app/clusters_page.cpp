// ClustersPage: the profile list and the local profile's details.
#include "clusters_page.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QThread>
#include <QVBoxLayout>

#include "local/engine_command.h"

namespace slipway::app {

ClustersPage::ClustersPage(const QString& resource_root, const QString& runs_dir, QWidget* parent)
    : QWidget(parent), resource_root_(resource_root), runs_dir_(runs_dir) {
    profiles_ = new QListWidget(this);
    profiles_->setMaximumWidth(240);
    profiles_->addItem(tr("This computer"));
    profiles_->setCurrentRow(0);
    details_ = new QLabel(this);
    details_->setTextFormat(Qt::RichText);
    details_->setWordWrap(true);
    details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* row = new QHBoxLayout;
    row->addWidget(profiles_);
    row->addWidget(details_, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("<b>Clusters</b>"), this));
    layout->addLayout(row, 1);
    refresh();
}

QString ClustersPage::details_text() const {
    return details_->text();
}

void ClustersPage::refresh() {
    const QString engine = find_engine_binary();
    const int cores = QThread::idealThreadCount();
    const QStringList example = engine_arguments(QStringLiteral("RUN.json"), 2);
    QString text =
        tr("<h3>This computer</h3>"
           "<p>The embedded default: runs <code>slipway-engine</code> here, without SSH or Slurm. "
           "The run config's <code>slurm.ntasks_per_node</code> sets the local ranks; "
           "inputs with relative paths are read from the resource folder, outputs go to the "
           "run's own folder.</p><table cellspacing=6>");
    auto row = [&text](const QString& k, const QString& v) {
        text += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(k, v);
    };
    row(tr("Engine"), engine.isEmpty()
                          ? tr("<span style='color:#c62828'>not found next to slipway or on PATH: "
                               "build it with SLIPWAY_BUILD_ENGINE=ON</span>")
                          : engine.toHtmlEscaped());
    row(tr("Command"),
        QStringLiteral("<code>slipway-engine %1</code>").arg(example.join(QLatin1Char(' ')).toHtmlEscaped()));
    row(tr("CPU cores"), QString::number(cores));
    row(tr("Local ranks"), kEngineHasLaunch ? tr("as the run config says (slipway-engine launch)")
                                            : tr("1 (slipway-engine launch is not available yet)"));
    row(tr("Resource folder"), resource_root_.isEmpty() ? tr("not found") : resource_root_.toHtmlEscaped());
    row(tr("Runs folder"), runs_dir_.toHtmlEscaped());
    text += QStringLiteral("</table>");
    details_->setText(text);
}

}  // namespace slipway::app
