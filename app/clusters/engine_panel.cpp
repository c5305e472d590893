// EnginePanel (see engine_panel.h).
#include "clusters/engine_panel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "clusters/job_output.h"

#include "app_settings.h"
#include "settings_keys.h"

namespace slipway::app {
namespace {

// Build logs can be long; the view keeps their end, where errors are.
constexpr int kOutputLines = 2000;

}  // namespace

EnginePanel::EnginePanel(QWidget* parent) : QWidget(parent) {
    intro_ = new QLabel(this);
    intro_->setWordWrap(true);
    image_ = new QLineEdit(this);
    image_->setPlaceholderText(tr("the image file on the cluster (.sqsh or .sif)"));
    partition_ = new QComboBox(this);
    partition_->setEditable(true);
    partition_->setToolTip(tr("Empty: the profile's default partition, else Slurm's"));
    gpus_ = new QSpinBox(this);
    gpus_->setRange(0, 16);
    gpus_->setToolTip(tr("The build compiles for the GPUs it finds on a node with them"));
    build_ = new QPushButton(tr("Build engine"), this);
    build_->setToolTip(
        tr("Queues a one-task Slurm job that compiles slipway-engine in this environment, "
           "unless an engine of this version is there already"));
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setToolTip(tr("Cancels the build job (scancel)."));
    cancel_->setEnabled(false);
    demo_ = new QPushButton(tr("Run the demo on this cluster"), this);
    demo_->setToolTip(
        tr("Submits the demo preset (a tiny model, about a minute) in this environment and "
           "plots it in the Monitor"));
    output_ = new JobOutput(kOutputLines, 160, this);

    auto* form = new QFormLayout;
    image_label_ = new QLabel(tr("Image"), this);
    form->addRow(image_label_, image_);
    form->addRow(tr("Partition"), partition_);
    form->addRow(tr("GPUs per node"), gpus_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(build_);
    buttons->addWidget(cancel_);
    buttons->addWidget(demo_);
    buttons->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel(tr("<b>Engine and first run</b>"), this));
    layout->addWidget(intro_);
    layout->addLayout(form);
    layout->addLayout(buttons);
    layout->addWidget(output_);

    connect(build_, &QPushButton::clicked, this, &EnginePanel::build_requested);
    connect(cancel_, &QPushButton::clicked, this, &EnginePanel::cancel_requested);
    connect(demo_, &QPushButton::clicked, this, &EnginePanel::demo_requested);
    connect(partition_, &QComboBox::currentTextChanged, this,
            [this](const QString& name) { gpus_->setValue(gpu_partitions_.contains(name) ? 1 : 0); });
}

void EnginePanel::show_cluster(const remote::ClusterProfile& profile, const QStringList& partitions,
                               const QStringList& gpu_partitions) {
    gpu_partitions_ = gpu_partitions;
    const bool switched = profile.name != cluster_;
    cluster_ = profile.name;
    builds_ = remote::engine_source_of(profile) == remote::EngineSource::kBuild;
    const bool takes_image = remote::takes_image(profile.container);
    image_label_->setVisible(takes_image);
    image_->setVisible(takes_image);
    build_->setVisible(builds_);
    cancel_->setVisible(builds_);
    intro_->setText(builds_ ? tr("Runs on this cluster use an engine built there, in their own environment, "
                                 "once per environment. Build it now to see that it compiles, or let the "
                                 "first run build it.")
                            : tr("Runs on this cluster use the engine its profile names (Edit... to build "
                                 "one on the cluster instead)."));
    const QString typed = partition_->currentText();
    {
        const QSignalBlocker block(partition_);
        partition_->clear();
        partition_->addItems(partitions);
    }
    if (!switched) {
        partition_->setCurrentText(typed);
        return;
    }
    image_->setText(app_settings().value(settings_keys::cluster_image(cluster_)).toString());
    partition_->setCurrentText(profile.default_partition.empty()
                                   ? partitions.value(0)
                                   : QString::fromStdString(profile.default_partition));
    gpus_->setValue(gpu_partitions_.contains(partition_->currentText()) ? 1 : 0);
    output_->clear();
    set_building(false);
}

EnvironmentChoice EnginePanel::choice() const {
    EnvironmentChoice choice;
    if (image_->isVisibleTo(this)) choice.image = image_->text().trimmed();
    choice.partition = partition_->currentText().trimmed();
    choice.gpus_per_node = gpus_->value();
    return choice;
}

void EnginePanel::remember_choice() const {
    if (!cluster_.empty())
        app_settings().setValue(settings_keys::cluster_image(cluster_), image_->text().trimmed());
}

void EnginePanel::set_building(bool building) {
    build_->setEnabled(!building);
    cancel_->setEnabled(building);
    demo_->setEnabled(!building);
    if (building) output_->start();
}

void EnginePanel::append_output(const QStringList& lines) {
    output_->append(lines);
}

void EnginePanel::show_result(bool ok, const QString& message) {
    output_->show_result(ok, message);
}

}  // namespace slipway::app
