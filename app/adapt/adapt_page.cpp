// adapt_page.h: the form, the live pipeline preview, and the CLI started on the pipeline.
#include "adapt/adapt_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QDoubleValidator>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QThread>
#include <QToolButton>
#include <QVBoxLayout>

#include "clusters/pipeline_job.h"
#include "contract/file_system.h"
#include "contract/pipeline.h"
#include "contract/run_config.h"
#include "core/install_paths.h"
#include "history/history_run_store.h"
#include "history/run_history.h"
#include "service/local_executor.h"
#include "service/local_pipeline.h"

namespace slipway::app {
namespace {

QSpinBox* spin(int minimum, int maximum, int value, const QString& zero_text = QString()) {
    auto* box = new QSpinBox;
    box->setRange(minimum, maximum);
    box->setValue(value);
    if (!zero_text.isEmpty()) box->setSpecialValueText(zero_text);
    return box;
}

}  // namespace

AdaptPage::AdaptPage(QString resource_root, QString local_runs_dir,
                     std::function<QStringList()> cluster_names, QWidget* parent)
    : QWidget(parent),
      resource_root_(std::move(resource_root)),
      local_runs_dir_(std::move(local_runs_dir)),
      pipelines_dir_(local_runs_dir_ + QStringLiteral("/pipelines")),
      cluster_names_(std::move(cluster_names)) {
    for (auto [preset, name] :
         {std::pair{&embeddings_preset_, "ruadapt-embeddings"}, {&lora_preset_, "ruadapt-lora"}}) {
        const std::string path = (resource_root_ + "/resources/presets/" + name + ".json").toStdString();
        Result<nlohmann::json> doc = read_json_file(path);
        if (doc.ok()) {
            *preset = *doc;
        } else {
            preset_problem_ = QString::fromStdString(doc.error());
        }
    }
    auto* form = new QFormLayout;
    name_ = new QLineEdit(QStringLiteral("ruadapt"));
    form->addRow(tr("Name"), name_);
    base_ = path_row(tr("Base model"), true, QString(), form);
    instruct_ = path_row(tr("Instruct model"), true, QString(), form);
    corpus_ = path_row(tr("Corpus (JSONL)"), false, QStringLiteral("JSONL (*.jsonl)"), form);
    tokenizer_ = new QComboBox;
    tokenizer_->addItem(tr("New BPE tokenizer"), QStringLiteral("bpe"));
    tokenizer_->addItem(tr("New Unigram tokenizer"), QStringLiteral("unigram"));
    tokenizer_->addItem(tr("The base tokenizer extended"), QStringLiteral("extend"));
    form->addRow(tr("Tokenizer"), tokenizer_);
    vocab_ = spin(256, 1000000, 32000);
    form->addRow(tr("Vocabulary size / tokens added"), vocab_);
    block_ = spin(0, 131072, 0, tr("as the preset"));
    form->addRow(tr("Block size"), block_);
    embedding_steps_ = spin(0, 10000000, 0, tr("one epoch"));
    form->addRow(tr("Embedding training steps"), embedding_steps_);
    learning_rate_ = new QLineEdit;
    learning_rate_->setValidator(new QDoubleValidator(0.0, 1.0, 12, learning_rate_));  // numbers only
    learning_rate_->setPlaceholderText(tr("as the preset"));
    form->addRow(tr("Embedding learning rate"), learning_rate_);
    lep_ = new QComboBox;
    for (const char* method : {"conversion", "overlap", "swap"})
        lep_->addItem(QString::fromLatin1(method), QString::fromLatin1(method));
    form->addRow(tr("LEP method"), lep_);
    calibrate_ = new QCheckBox(tr("Calibrate with a short LoRA run"));
    calibrate_->setChecked(true);
    form->addRow(QString(), calibrate_);
    calibration_data_ = path_row(tr("Calibration data"), false, QStringLiteral("JSONL (*.jsonl)"), form);
    calibration_data_->setPlaceholderText(tr("the corpus"));
    calibration_steps_ = spin(0, 10000000, 0, tr("one epoch"));
    form->addRow(tr("Calibration steps"), calibration_steps_);
    tasks_ = path_row(tr("Eval tasks"), false, QStringLiteral("JSON (*.json)"), form);
    tasks_->setPlaceholderText(tr("none"));
    target_ = new QComboBox;
    form->addRow(tr("Run on"), target_);
    refresh_targets();
    // A cluster's resources for the training steps (the presets' are the seed's cluster's).
    const nlohmann::json preset_slurm = embeddings_preset_.value("slurm", nlohmann::json::object());
    const auto preset_text = [&](const char* key) {
        const nlohmann::json v = preset_slurm.value(key, nlohmann::json());
        return v.is_string() ? QString::fromStdString(v.get<std::string>())
               : v.is_null() ? QString()
                             : QString::fromStdString(v.dump());
    };
    nodes_ = spin(0, 4096, 0, tr("as the preset (%1)").arg(preset_text("nodes")));
    form->addRow(tr("Nodes"), nodes_);
    gpus_ = spin(-1, 64, -1, tr("as the preset (%1)").arg(preset_text("gpus_per_node")));
    form->addRow(tr("GPUs per node"), gpus_);
    time_ = new QLineEdit;
    time_->setPlaceholderText(tr("as the preset (%1)").arg(preset_text("time")));
    time_->setToolTip(tr("The training steps' Slurm time limit; the other steps are short and keep an hour"));
    form->addRow(tr("Time limit"), time_);
    image_ = new QLineEdit;
    image_->setPlaceholderText(tr("as the preset (%1)").arg(preset_text("container_image")));
    image_->setToolTip(
        tr("An image on the cluster (an enroot .sqsh file or a registry name); its mounts are "
           "the ones below, not the preset's"));
    form->addRow(tr("Container image"), image_);
    mounts_ = new QLineEdit;
    mounts_->setPlaceholderText(tr("host:container, ..."));
    form->addRow(tr("Container mounts"), mounts_);

    start_ = new QPushButton(tr("Start"));
    stop_ = new QPushButton(tr("Stop"));
    stop_->setToolTip(tr("Stops the step running on This computer; the pipeline ends there"));
    save_ = new QPushButton(tr("Save pipeline..."));
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(save_);
    buttons->addWidget(stop_);
    buttons->addWidget(start_);
    status_ = new QLabel;
    status_->setWordWrap(true);
    auto* left = new QWidget;
    auto* left_layout = new QVBoxLayout(left);
    left_layout->addLayout(form);
    left_layout->addWidget(status_);
    left_layout->addLayout(buttons);
    left_layout->addStretch(1);

    preview_ = new QPlainTextEdit;
    preview_->setReadOnly(true);
    preview_->setLineWrapMode(QPlainTextEdit::NoWrap);
    log_ = new QPlainTextEdit;
    log_->setReadOnly(true);
    log_->setPlaceholderText(tr("The steps' progress appears here once started."));
    auto* right = new QSplitter(Qt::Vertical);
    right->addWidget(preview_);
    right->addWidget(log_);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    for (QLineEdit* edit : {name_, base_, instruct_, corpus_, calibration_data_, tasks_, learning_rate_,
                            time_, image_, mounts_})
        connect(edit, &QLineEdit::textChanged, this, &AdaptPage::refresh);
    for (QComboBox* box : {tokenizer_, lep_, target_})
        connect(box, &QComboBox::currentIndexChanged, this, &AdaptPage::refresh);
    for (QSpinBox* box : {vocab_, block_, embedding_steps_, calibration_steps_, nodes_, gpus_})
        connect(box, &QSpinBox::valueChanged, this, &AdaptPage::refresh);
    connect(calibrate_, &QCheckBox::toggled, this, &AdaptPage::refresh);
    connect(tokenizer_, &QComboBox::currentIndexChanged, this, [this] {
        vocab_->setValue(tokenizer_->currentData().toString() == QLatin1String("extend") ? 8000 : 32000);
    });
    connect(start_, &QPushButton::clicked, this, [this] {
        if (const Status s = start(); !s.ok()) status_->setText(QString::fromStdString(s.message()));
    });
    connect(stop_, &QPushButton::clicked, this, &AdaptPage::stop);
    connect(save_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save pipeline"), pipelines_dir_,
                                                          QStringLiteral("JSON (*.json)"));
        if (path.isEmpty()) return;
        if (const Status s = save_to(path); !s.ok()) status_->setText(QString::fromStdString(s.message()));
    });
    refresh();
}

QLineEdit* AdaptPage::path_row(const QString& label, bool folder, const QString& filter, QFormLayout* form) {
    auto* edit = new QLineEdit;
    auto* browse = new QToolButton;
    browse->setText(QStringLiteral("..."));
    connect(browse, &QToolButton::clicked, this, [this, edit, folder, filter, label] {
        const QString chosen = folder ? QFileDialog::getExistingDirectory(this, label, edit->text())
                                      : QFileDialog::getOpenFileName(this, label, edit->text(), filter);
        if (!chosen.isEmpty()) edit->setText(chosen);
    });
    auto* row = new QHBoxLayout;
    row->addWidget(edit, 1);
    row->addWidget(browse);
    form->addRow(label, row);
    return edit;
}

void AdaptPage::refresh_targets() {
    const QString current = target_->currentData().toString();
    target_->clear();
    target_->addItem(tr("This computer"), QString());
    for (const QString& name : cluster_names_ ? cluster_names_() : QStringList())
        target_->addItem(name, name);
    const int index = target_->findData(current);
    target_->setCurrentIndex(index < 0 ? 0 : index);
}

LanguageAdaptation AdaptPage::adaptation() const {
    LanguageAdaptation a;
    a.name = name_->text().trimmed().toStdString();
    a.base_model = base_->text().trimmed().toStdString();
    a.instruct_model = instruct_->text().trimmed().toStdString();
    a.corpus = corpus_->text().trimmed().toStdString();
    a.tokenizer = tokenizer_->currentData().toString().toStdString();
    (a.tokenizer == "extend" ? a.added_tokens : a.vocab_size) = vocab_->value();
    a.block_size = block_->value();
    a.embedding_steps = embedding_steps_->value();
    a.embedding_learning_rate = learning_rate_->text().trimmed().toDouble();
    a.lep_method = lep_->currentData().toString().toStdString();
    a.calibrate = calibrate_->isChecked();
    a.calibration_data = calibration_data_->text().trimmed().toStdString();
    a.calibration_steps = calibration_steps_->value();
    a.eval_tasks = tasks_->text().trimmed().toStdString();
    a.on_this_computer = target_->currentData().toString().isEmpty();
    a.cluster.nodes = nodes_->value();
    if (gpus_->value() >= 0) a.cluster.gpus_per_node = gpus_->value();
    a.cluster.time = time_->text().trimmed().toStdString();
    a.cluster.container_image = image_->text().trimmed().toStdString();
    for (const QString& mount : mounts_->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        if (!mount.trimmed().isEmpty()) a.cluster.container_mounts.push_back(mount.trimmed().toStdString());
    }
    return a;
}

Result<nlohmann::json> AdaptPage::pipeline() const {
    if (!preset_problem_.isEmpty()) return Status::Error(preset_problem_.toStdString());
    Result<nlohmann::json> doc = language_pipeline(adaptation(), embeddings_preset_, lora_preset_);
    if (!doc.ok()) return doc;
    const ParsedPipeline parsed = parse_pipeline(*doc, pipelines_dir_.toStdString());
    if (has_errors(parsed.problems)) return Status::Error(format_problems(parsed.problems));
    return doc;
}

void AdaptPage::refresh() {
    const Result<nlohmann::json> doc = pipeline();
    if (doc.ok()) {
        preview_->setPlainText(QString::fromStdString(doc->dump(2)));
        status_->setText(
            tr("%n step(s), ready to start.", nullptr, static_cast<int>((*doc)["steps"].size())));
    } else {
        status_->setText(QString::fromStdString(doc.error()));
    }
    const bool on_cluster = !target_->currentData().toString().isEmpty();
    for (QWidget* w : std::initializer_list<QWidget*>{nodes_, gpus_, time_, image_, mounts_})
        w->setEnabled(on_cluster);
    mounts_->setEnabled(on_cluster && !image_->text().trimmed().isEmpty());
    calibration_data_->setEnabled(calibrate_->isChecked());
    calibration_steps_->setEnabled(calibrate_->isChecked());
    start_->setEnabled(doc.ok() && !running());
    stop_->setEnabled((local_thread_ != nullptr && local_thread_->isRunning() && !local_stop_asked()) ||
                      (cluster_job_ != nullptr && cluster_job_->running()));
    save_->setEnabled(doc.ok());
}

Status AdaptPage::save_to(const QString& path) const {
    const Result<nlohmann::json> doc = pipeline();
    if (!doc.ok()) return doc.status();
    return write_file_atomically(path.toStdString(), doc->dump(2) + "\n");
}

AdaptPage::~AdaptPage() {
    // The window is closing: a step running here has the closing grace, not a user's Stop's, to save and exit
    // (set before anything else the runner could read first; a Stop the runner already carries out keeps
    // its grace).
    if (stop_local_) {
        int64_t asked = stop_local_->load();
        while ((asked == kNoStop || asked > kClosingGrace.count()) &&
               !stop_local_->compare_exchange_weak(asked, kClosingGrace.count())) {
        }
    }
    stop();  // a submission to a cluster
    if (local_thread_ != nullptr) local_thread_->wait();
    delete local_thread_;  // no parent: a QThread::create thread
}

bool AdaptPage::running() const {
    return (cluster_job_ != nullptr && cluster_job_->running()) ||
           (local_thread_ != nullptr && local_thread_->isRunning());
}

void AdaptPage::stop() {
    if (cluster_job_ != nullptr && cluster_job_->running()) {
        cluster_job_->stop();
        if (log_ != nullptr) log_->appendPlainText(tr("Stopping..."));
        return;
    }
    if (!stop_local_ || local_stop_asked()) return;
    stop_local_->store(kStopGrace.count());
    if (log_ != nullptr) log_->appendPlainText(tr("Stopping..."));
    refresh();
}

Status AdaptPage::start() {
    if (running()) return Status::Error("a pipeline started here is still running");
    const LanguageAdaptation a = adaptation();
    if (!QDir().mkpath(pipelines_dir_))
        return Status::Error(pipelines_dir_.toStdString() + ": cannot create");
    const QString file =
        QDir(pipelines_dir_)
            .filePath(QString::fromStdString(a.name) +
                      QDateTime::currentDateTime().toString(QStringLiteral("-yyyyMMdd-HHmmss")) +
                      QStringLiteral(".json"));
    if (const Status s = save_to(file); !s.ok()) return s;
    const QString cluster = target_->currentData().toString();
    log_->clear();
    const Status s = cluster.isEmpty() ? start_here(file) : start_on_cluster(file, cluster);
    if (!s.ok()) return s;
    refresh();
    emit started(file);
    return Status::Ok();
}

Status AdaptPage::start_here(const QString& file) {
    Result<Pipeline> pipeline = load_pipeline(file.toStdString());
    if (!pipeline.ok()) return pipeline.status();
    if (engine_.isEmpty() || !QFileInfo(engine_).isExecutable())
        return Status::Error("slipway-engine was not found: " + engine_.toStdString());
    LocalPipelineOptions options;
    options.engine = QFile::encodeName(engine_).toStdString();
    options.input_root = pipeline_input_root(*pipeline, file.toStdString(), {}, resource_root());
    options.runs_dir = QFile::encodeName(local_runs_dir_).toStdString();
    auto stop = std::make_shared<std::atomic<int64_t>>(kNoStop);
    stop_local_ = stop;
    options.stop_requested = [stop]() -> std::optional<std::chrono::milliseconds> {
        const int64_t grace_ms = stop->load();
        if (grace_ms == kNoStop) return std::nullopt;
        return std::chrono::milliseconds(grace_ms);
    };
    log_->appendPlainText(tr("Running pipeline %1 on This computer").arg(file));
    delete local_thread_;
    // The runner waits for each step's process on its own thread; its events come back to the page queued.
    local_thread_ = QThread::create([this, p = std::move(*pipeline), options,
                                     store_path = store_path_]() mutable {
        std::unique_ptr<RunHistory> store;
        std::string store_error;
        if (!store_path.isEmpty()) {
            if (Result<std::unique_ptr<RunHistory>> opened = RunHistory::open(store_path.toStdString());
                opened.ok())
                store = std::move(*opened);
            else
                store_error = opened.error();
        }
        std::unique_ptr<HistoryRunStore> runs_store;
        if (store) runs_store = std::make_unique<HistoryRunStore>(*store);
        options.store = runs_store.get();
        Result<LocalPipelineOutcome> outcome =
            run_local_pipeline(p, options, [this](const LocalPipelineEvent& e) {
                QMetaObject::invokeMethod(
                    this, [this, e] { on_local_event(e); }, Qt::QueuedConnection);
            });
        const QString last = outcome.ok()
                                 ? QString::fromStdString(describe_pipeline_completion(p.name, *outcome))
                                 : QString::fromStdString(outcome.error());
        const QString warning =
            store_error.empty() ? QString() : QString::fromStdString("run history: " + store_error);
        const bool ok = outcome.ok();
        QMetaObject::invokeMethod(
            this,
            [this, last, warning, ok] {
                if (!warning.isEmpty()) log_->appendPlainText(warning);
                log_->appendPlainText(last);
                log_->appendPlainText(ok ? tr("Finished.") : tr("Stopped: the pipeline did not complete."));
                refresh();
                emit progressed();
                emit finished(ok ? 0 : 1);
            },
            Qt::QueuedConnection);
    });
    connect(local_thread_, &QThread::finished, this, &AdaptPage::refresh);  // Start again, Stop off
    local_thread_->setObjectName(QStringLiteral("slipway-pipeline"));
    local_thread_->start();
    return Status::Ok();
}

void AdaptPage::on_local_event(const LocalPipelineEvent& e) {
    if (!e.store_problem.empty())
        log_->appendPlainText(QString::fromStdString("run history: " + e.store_problem));
    if (const std::string line = describe_pipeline_event(e); !line.empty())
        log_->appendPlainText(QString::fromStdString(line));
    if (e.kind == LocalPipelineEvent::Kind::kStepStarted && e.training && e.store_id != 0)
        emit training_step_started(e.store_id);
    if (e.kind != LocalPipelineEvent::Kind::kStarted) emit progressed();
}

Status AdaptPage::start_on_cluster(const QString& file, const QString& cluster) {
    Result<Pipeline> pipeline = load_pipeline(file.toStdString());
    if (!pipeline.ok()) return pipeline.status();
    PipelineJob* job = make_cluster_job_ ? make_cluster_job_(cluster) : nullptr;
    if (job == nullptr) return Status::Error("no cluster profile named " + cluster.toStdString());
    delete cluster_job_;  // the last one has finished (running() said so)
    stop_local_.reset();
    cluster_job_ = job;
    job->setParent(this);
    connect(job, &ClusterJob::output, this, [this](const QStringList& lines) {
        for (const QString& line : lines)
            log_->appendPlainText(line);
    });
    connect(job, &PipelineJob::step_queued, this, &AdaptPage::on_step_queued);
    connect(job, &ClusterJob::finished, this, [this](bool ok, const QString& message) {
        log_->appendPlainText(message);
        log_->appendPlainText(ok ? tr("Finished.") : tr("Stopped: the pipeline was not submitted."));
        refresh();
        emit progressed();
        emit finished(ok ? 0 : 1);
    });
    PipelineSubmitRequest request;
    request.input_root = pipeline_input_root(*pipeline, file.toStdString(), {}, resource_root());
    request.engine_binary = QFile::encodeName(engine_).toStdString();  // where the profile says desktop
    request.engine_bundle = find_engine_bundle();                      // where it says build
    log_->appendPlainText(tr("Submitting pipeline %1 to %2").arg(file, cluster));
    job->start(std::move(*pipeline), std::move(request), store_path_);
    return Status::Ok();
}

void AdaptPage::on_step_queued(const QueuedStep& step) {
    if (step.training && step.store_id != 0) emit training_step_started(step.store_id);
    emit progressed();
}

}  // namespace slipway::app
