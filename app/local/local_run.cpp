// Local runs: the plan (paths, run.json, command) and the QProcess that runs it.
#include "local/local_run.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QTimer>

#include "local/engine_command.h"

namespace slipway::app {
namespace {

void resolve(std::string& path, const QDir& base) {
    if (path.empty() || QDir::isAbsolutePath(QString::fromStdString(path))) return;
    path = QDir::cleanPath(base.absoluteFilePath(QString::fromStdString(path))).toStdString();
}

QString safe_name(const std::string& name) {
    QString out;
    for (const QChar c : QString::fromStdString(name))
        out += (c.isLetterOrNumber() || c == '-' || c == '_') ? c : '_';
    return out.isEmpty() ? QStringLiteral("run") : out.left(64);
}

}  // namespace

Result<LocalRunPlan> plan_local_run(const RunConfig& config, const QString& resource_root,
                                    const QString& runs_dir, const QString& engine,
                                    const QStringList& overrides) {
    if (engine.isEmpty() || !QFileInfo(engine).isExecutable()) {
        return Result<LocalRunPlan>::Error(
            "slipway-engine was not found next to slipway or on PATH; build it (SLIPWAY_BUILD_ENGINE=ON)");
    }
    LocalRunPlan plan;
    plan.config = config;
    plan.engine = engine;
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
    plan.run_dir = QDir(runs_dir).absoluteFilePath(safe_name(config.name) + "-" + stamp);
    if (!QDir().mkpath(plan.run_dir)) {
        return Result<LocalRunPlan>::Error("cannot create run folder " + plan.run_dir.toStdString());
    }
    // Inputs are relative to the resource root (presets name resources/demo/...); outputs go to the run
    // folder, so two runs of one preset never write over each other.
    const QDir inputs(resource_root.isEmpty() ? QDir::currentPath() : resource_root);
    const QDir outputs(plan.run_dir);
    RunConfig& c = plan.config;
    resolve(c.model.path, inputs);
    resolve(c.tokenizer.path, inputs);
    resolve(c.data.train_file, inputs);
    resolve(c.data.validation_file, inputs);
    resolve(c.data.chat_template, inputs);
    resolve(c.eval.tasks, inputs);  // its data files are relative to it
    if (c.training.resume_from_checkpoint != "latest") resolve(c.training.resume_from_checkpoint, inputs);
    c.training.output_dir = outputs.absoluteFilePath(QStringLiteral("output")).toStdString();
    if (!c.data.cache_dir.empty() && !QDir::isAbsolutePath(QString::fromStdString(c.data.cache_dir))) {
        // A cache shared by the runs: the same corpus is tokenized once for all of them.
        c.data.cache_dir =
            QDir::cleanPath(QDir(runs_dir).absoluteFilePath(
                                QStringLiteral("../cache/") +
                                QFileInfo(QString::fromStdString(c.data.cache_dir)).fileName()))
                .toStdString();
    }
    plan.run_json = outputs.absoluteFilePath(QStringLiteral("run.json"));
    if (const Status s = save_run_config(c, plan.run_json.toStdString()); !s.ok()) return s;
    plan.mllog_path = QString::fromStdString(c.training.output_dir) + QStringLiteral("/mllog.txt");
    plan.arguments = engine_arguments(plan.run_json, static_cast<int>(c.tasks_per_node()), overrides);
    return plan;
}

LocalRunner::LocalRunner(QObject* parent) : QObject(parent), process_(new QProcess(this)) {
    process_->setProcessChannelMode(QProcess::MergedChannels);
    connect(process_, &QProcess::started, this, [this] { emit started(process_->processId()); });
    connect(process_, &QProcess::readyReadStandardOutput, this,
            [this] { emit output(QString::fromUtf8(process_->readAllStandardOutput())); });
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart && !reported_) {
            reported_ = true;
            emit finished(-1, cancelled_, process_->errorString());
        }
    });
    connect(process_, qOverload<int, QProcess::ExitStatus>(&QProcess::finished), this,
            [this](int code, QProcess::ExitStatus status) {
                if (reported_) return;
                reported_ = true;
                const bool crashed = status == QProcess::CrashExit;
                emit finished(crashed ? -1 : code, cancelled_,
                              crashed && !cancelled_ ? process_->errorString() : QString());
            });
}

LocalRunner::~LocalRunner() {
    if (process_->state() == QProcess::NotRunning) return;
    // SIGTERM first: `launch` forwards it to every rank's process group (a checkpoint is saved); SIGKILL
    // would leave the ranks running without their launcher.
    process_->terminate();
    if (!process_->waitForFinished(5000)) {
        process_->kill();
        process_->waitForFinished(2000);
    }
}

void LocalRunner::start(const LocalRunPlan& plan) {
    plan_ = plan;
    cancelled_ = false;
    reported_ = false;
    process_->setWorkingDirectory(plan.run_dir);
    process_->start(plan.engine, plan.arguments);
}

void LocalRunner::cancel() {
    if (process_->state() == QProcess::NotRunning) return;
    cancelled_ = true;
    process_->terminate();
    QTimer::singleShot(10'000, process_, [p = process_] {
        if (p->state() != QProcess::NotRunning) p->kill();
    });
}

}  // namespace slipway::app
