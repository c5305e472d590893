// "Adapt a model to a language" (seed 001): a form for the chain of language_pipeline.h, its pipeline shown
// and checked as it is edited, saved as a file, and started through the app's own CLI (`slipway pipeline run`
// on This computer, `slipway submit --cluster` on a cluster), so every step becomes a run in the history that
// the Runs page lists and the monitor follows like any other.
#pragma once

#include <functional>

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <nlohmann/json.hpp>

#include "adapt/language_pipeline.h"
#include "contract/status.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTimer;

namespace slipway::app {

class AdaptPage : public QWidget {
    Q_OBJECT

public:
    // `resource_root`: the presets; `local_runs_dir`: where runs on This computer go (the pipelines started
    // here are written in its "pipelines" folder); `cluster_names`: the cluster profiles a pipeline can go
    // to.
    AdaptPage(QString resource_root, QString local_runs_dir, std::function<QStringList()> cluster_names,
              QWidget* parent = nullptr);

    LanguageAdaptation adaptation() const;
    // The form's pipeline, checked as `slipway pipeline validate` checks it; the error lists the problems.
    Result<nlohmann::json> pipeline() const;
    // Writes the pipeline under pipelines_dir and starts the CLI on it; its output goes into the log box.
    Status start();
    Status save_to(const QString& path) const;
    QProcess* process() const { return process_; }
    // The name of the pipeline started last: its steps are the history rows named "<name>.<step>".
    QString started_name() const { return started_name_; }
    // The `slipway` program the page runs (default: this application, whose subcommands are the CLI).
    void set_cli_binary(const QString& path) { cli_ = path; }

    // The form, for tests and the screenshot.
    QLineEdit* base_edit() const { return base_; }
    QLineEdit* instruct_edit() const { return instruct_; }
    QLineEdit* corpus_edit() const { return corpus_; }
    QLineEdit* tasks_edit() const { return tasks_; }
    QComboBox* tokenizer_box() const { return tokenizer_; }
    QSpinBox* vocab_box() const { return vocab_; }
    QSpinBox* block_box() const { return block_; }
    QSpinBox* embedding_steps_box() const { return embedding_steps_; }
    QSpinBox* calibration_steps_box() const { return calibration_steps_; }
    QComboBox* target_box() const { return target_; }
    QPlainTextEdit* preview() const { return preview_; }
    QLabel* status_label() const { return status_; }
    QPlainTextEdit* log() const { return log_; }

signals:
    void started(const QString& pipeline_file);
    // The CLI wrote output, or a second passed while it runs: a step may have started or ended (the run
    // history has new rows).
    void progressed();
    void finished(int exit_code);

private:
    void refresh();
    void refresh_targets();
    QLineEdit* path_row(const QString& label, bool folder, const QString& filter, QFormLayout* form);

    QString resource_root_, local_runs_dir_, pipelines_dir_, cli_;
    std::function<QStringList()> cluster_names_;
    nlohmann::json embeddings_preset_, lora_preset_;
    QString preset_problem_;
    QLineEdit *name_, *base_, *instruct_, *corpus_, *calibration_data_, *tasks_;
    QComboBox *tokenizer_, *lep_, *target_;
    QSpinBox *vocab_, *block_, *embedding_steps_, *calibration_steps_;
    QLineEdit* learning_rate_;
    QCheckBox* calibrate_;
    QPlainTextEdit *preview_, *log_;
    QLabel* status_;
    QPushButton *start_, *save_;
    QProcess* process_ = nullptr;
    QTimer* poll_ = nullptr;
    QString started_name_;
};

}  // namespace slipway::app
