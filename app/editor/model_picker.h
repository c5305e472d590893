// The model picker: what a model's config.json says, for a person choosing a model and its LoRA targets:
// family, parameter count (the engine's own count, model/llama_config.h), context length, vocabulary and
// shape, and the linear modules as a checklist that sets the run's LoRA targets. The editor opens it from
// the model folder's row and feeds it the config.json of this computer's folder, or a local copy of a
// cluster model's.
#pragma once

#include <QDialog>
#include <QStringList>

#include "contract/status.h"
#include "editor/model_info.h"

class QLabel;
class QListWidget;
class QPushButton;

namespace slipway::app {

class ModelPicker : public QDialog {
    Q_OBJECT

public:
    explicit ModelPicker(QWidget* parent = nullptr);

    // `source`: the config.json read (or tried). `targets`: the run's LoRA targets, checked in the list;
    // `lora`: whether the run trains LoRA adapters (the checklist is offered only then).
    void show_model(const Result<ModelShape>& shape, const QString& source, const QStringList& targets,
                    bool lora);
    QLabel* summary() const { return summary_; }
    QListWidget* targets() const { return targets_; }
    QPushButton* apply_button() const { return apply_; }

signals:
    // "Use as LoRA targets": the checked module names, in the model's order.
    void targets_chosen(const QStringList& names);
    // The folder is not on this computer: the user wants to pick a local copy of its config.json.
    void local_config_requested();

private:
    QLabel* summary_;
    QListWidget* targets_;
    QPushButton* apply_;
    QPushButton* pick_config_;
};

}  // namespace slipway::app
