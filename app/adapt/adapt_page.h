// "Adapt a model to a language" (seed 001): a form for the chain of language_pipeline.h, its pipeline shown
// and checked as it is edited, saved as a file, and started: on This computer in-process
// (local/local_pipeline.h on a thread of its own, the same runner as `slipway pipeline run`: each step's
// event comes straight to the page), on a cluster through the app's own CLI (`slipway submit --cluster`).
// Every step becomes a run in the history that the Runs page lists and the monitor follows like any other.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <nlohmann/json.hpp>

#include "adapt/language_pipeline.h"
#include "contract/status.h"
#include "local/local_pipeline.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QThread;
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
    ~AdaptPage() override;  // stops a pipeline running here and waits for its thread

    LanguageAdaptation adaptation() const;
    // The form's pipeline, checked as `slipway pipeline validate` checks it; the error lists the problems.
    Result<nlohmann::json> pipeline() const;
    // Writes the pipeline under pipelines_dir and starts it (This computer: in-process; a cluster: the CLI's
    // submit); what it says goes into the log box.
    Status start();
    // Stops a pipeline running on This computer (its step's process is killed; the step ends cancelled).
    void stop();
    bool running() const;
    Status save_to(const QString& path) const;
    // What a pipeline on This computer runs (slipway-engine) and where its steps' rows go (the window's run
    // history; empty: none).
    void set_local_runner(const QString& engine, const QString& store_path) {
        engine_ = engine;
        store_path_ = store_path;
    }
    // The name of the pipeline started last: its steps are the history rows named "<name>.<step>".
    QString started_name() const { return started_name_; }
    // The cluster it was submitted to; empty for This computer.
    QString started_cluster() const { return started_cluster_; }
    // The `slipway` program the page runs for clusters (default: this application, whose subcommands are the
    // CLI).
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
    QPushButton* stop_button() const { return stop_; }
    QPlainTextEdit* log() const { return log_; }

signals:
    void started(const QString& pipeline_file);
    // A step started or ended (the run history has new rows). A cluster submission: its CLI wrote output or
    // a second passed.
    void progressed();
    // A training step of a pipeline on This computer started: its row in the run history (its mllog is
    // followed like any local run's).
    void training_step_started(qint64 store_id);
    void finished(int exit_code);

private:
    Status start_here(const QString& file);
    Status start_on_cluster(const QString& file, const QString& cluster);
    void on_local_event(const LocalPipelineEvent& event);
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
    QPushButton *start_, *stop_, *save_;
    QProcess* process_ = nullptr;  // the CLI's submit to a cluster
    QTimer* poll_ = nullptr;
    QThread* local_thread_ = nullptr;  // a pipeline on This computer
    std::shared_ptr<std::atomic<bool>> stop_local_;
    QString engine_, store_path_;
    QString started_name_, started_cluster_;
};

}  // namespace slipway::app
