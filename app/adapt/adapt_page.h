// "Adapt a model to a language" (seed 001): a form for the chain of language_pipeline.h, its pipeline shown
// and checked as it is edited, saved as a file, and started: on This computer in-process
// (service/local_pipeline.h on a thread of its own, the same runner as `slipway pipeline run`: each step's
// event comes straight to the page), or on a cluster in-process too (clusters/pipeline_job.h: the run
// service's submit_pipeline, the same as `slipway submit PIPELINE.json`, each queued step told to the page).
// Every step becomes a run in the history that the Runs page lists and the monitor follows like any other.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include <QString>
#include <QStringList>
#include <QWidget>

#include <nlohmann/json.hpp>

#include "adapt/language_pipeline.h"
#include "contract/status.h"
#include "service/local_pipeline.h"
#include "service/slurm_pipeline.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QThread;

namespace slipway::app {

class PipelineJob;

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
    // Makes the job that submits a pipeline to the cluster profile named (null: no such profile); the window
    // gives its profiles, dialogs and connector.
    using PipelineJobFactory = std::function<PipelineJob*(const QString& cluster)>;
    void set_cluster_jobs(PipelineJobFactory factory) { make_cluster_job_ = std::move(factory); }
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
    QSpinBox* nodes_box() const { return nodes_; }
    QSpinBox* gpus_box() const { return gpus_; }
    QLineEdit* image_edit() const { return image_; }
    QLineEdit* mounts_edit() const { return mounts_; }
    QLineEdit* time_edit() const { return time_; }
    QComboBox* target_box() const { return target_; }
    QPlainTextEdit* preview() const { return preview_; }
    QLabel* status_label() const { return status_; }
    QPushButton* stop_button() const { return stop_; }
    QPlainTextEdit* log() const { return log_; }

signals:
    void started(const QString& pipeline_file);
    // A step started, ended or was queued on a cluster (the run history has new rows).
    void progressed();
    // A training step of a pipeline started on This computer, or was queued on a cluster: its row in the run
    // history (its log is followed like any run's).
    void training_step_started(qint64 store_id);
    void finished(int exit_code);

private:
    Status start_here(const QString& file);
    Status start_on_cluster(const QString& file, const QString& cluster);
    void on_local_event(const LocalPipelineEvent& event);
    void on_step_queued(const QueuedStep& step);
    void refresh();
    void refresh_targets();
    QLineEdit* path_row(const QString& label, bool folder, const QString& filter, QFormLayout* form);

    QString resource_root_, local_runs_dir_, pipelines_dir_;
    std::function<QStringList()> cluster_names_;
    nlohmann::json embeddings_preset_, lora_preset_;
    QString preset_problem_;
    QLineEdit *name_, *base_, *instruct_, *corpus_, *calibration_data_, *tasks_;
    QComboBox *tokenizer_, *lep_, *target_;
    QSpinBox *vocab_, *block_, *embedding_steps_, *calibration_steps_;
    QLineEdit* learning_rate_;
    // A cluster target's resources for the training steps.
    QSpinBox *nodes_, *gpus_;
    QLineEdit *time_, *image_, *mounts_;
    QCheckBox* calibrate_;
    QPlainTextEdit *preview_, *log_;
    QLabel* status_;
    QPushButton *start_, *stop_, *save_;
    PipelineJobFactory make_cluster_job_;
    PipelineJob* cluster_job_ = nullptr;  // the last submission to a cluster (a child of the page)
    QThread* local_thread_ = nullptr;     // a pipeline on This computer
    // The grace (ms) a stop gives the step running on This computer; kNoStop until one is asked. Shared with
    // the runner's thread, which reads it between its polls of the step.
    static constexpr int64_t kNoStop = -1;
    std::shared_ptr<std::atomic<int64_t>> stop_local_;
    bool local_stop_asked() const { return stop_local_ && stop_local_->load() != kNoStop; }
    QString engine_, store_path_;
};

}  // namespace slipway::app
