// ModelPicker: config.json facts as a small table, LoRA targets as a checklist.
#include "editor/model_picker.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "editor/plan_strip.h"

namespace slipway::app {

ModelPicker::ModelPicker(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Model"));
    resize(540, 420);
    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("model_summary"));
    summary_->setTextFormat(Qt::RichText);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    targets_ = new QListWidget(this);
    targets_->setToolTip(tr("The linear modules of every layer that can get LoRA adapters"));
    apply_ = new QPushButton(tr("Use as LoRA targets"), this);
    pick_config_ = new QPushButton(tr("Choose a local config.json..."), this);
    pick_config_->setToolTip(
        tr("For a model folder on a cluster: a copy of its config.json on this computer"));
    auto* close = new QPushButton(tr("Close"), this);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(pick_config_);
    buttons->addStretch(1);
    buttons->addWidget(apply_);
    buttons->addWidget(close);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(summary_);
    layout->addWidget(new QLabel(tr("LoRA target modules:"), this));
    layout->addWidget(targets_, 1);
    layout->addLayout(buttons);

    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    connect(pick_config_, &QPushButton::clicked, this, &ModelPicker::local_config_requested);
    connect(apply_, &QPushButton::clicked, this, [this] {
        QStringList names;
        for (int i = 0; i < targets_->count(); ++i) {
            if (targets_->item(i)->checkState() == Qt::Checked) names << targets_->item(i)->text();
        }
        emit targets_chosen(names);
    });
}

void ModelPicker::show_model(const Result<ModelShape>& shape, const QString& source,
                             const QStringList& targets, bool lora) {
    targets_->clear();
    if (!shape.ok()) {
        summary_->setText(
            tr("<b>No model facts</b><br>%1").arg(QString::fromStdString(shape.error()).toHtmlEscaped()));
        targets_->setEnabled(false);
        apply_->setEnabled(false);
        return;
    }
    const model::LlamaConfig& c = shape->config;
    QString family = QString::fromStdString(shape->model_type);
    if (!shape->architecture.empty())
        family += QStringLiteral(" (%1)").arg(QString::fromStdString(shape->architecture));
    summary_->setText(
        tr("<table>"
           "<tr><td>Family:&nbsp;</td><td><b>%1</b></td></tr>"
           "<tr><td>Parameters:&nbsp;</td><td><b>%2</b></td></tr>"
           "<tr><td>Context:&nbsp;</td><td><b>%3 tokens</b></td></tr>"
           "<tr><td>Vocabulary:&nbsp;</td><td><b>%4 tokens</b></td></tr>"
           "<tr><td>Shape:&nbsp;</td><td>%5 layers, hidden %6, MLP %7, %8 heads (%9 key/value)</td></tr>"
           "</table><br><span style='color:#757575'>%10</span>")
            .arg(family.toHtmlEscaped(), human_count(static_cast<double>(c.parameter_count())))
            .arg(c.max_position_embeddings)
            .arg(c.vocab_size)
            .arg(c.num_hidden_layers)
            .arg(c.hidden_size)
            .arg(c.intermediate_size)
            .arg(c.num_attention_heads)
            .arg(c.num_key_value_heads)
            .arg(source.toHtmlEscaped()));
    for (const std::string& name : linear_module_names(*shape)) {
        auto* item = new QListWidgetItem(QString::fromStdString(name), targets_);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        const bool all = targets.contains(QStringLiteral("all-linear"));
        item->setCheckState(all || targets.contains(item->text()) ? Qt::Checked : Qt::Unchecked);
    }
    targets_->setEnabled(lora);
    apply_->setEnabled(lora);
    apply_->setToolTip(lora ? QString() : tr("LoRA targets apply when the Adapter page trains lora"));
}

}  // namespace slipway::app
