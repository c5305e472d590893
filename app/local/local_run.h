// A run on "This computer": the run config made self-contained (relative inputs resolved against the
// resource root, outputs under the run's own folder), written as run.json, and slipway-engine started on
// it through QProcess. The monitor follows <output_dir>/mllog.txt exactly as it follows a cluster log.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

#include "contract/run_config.h"
#include "contract/status.h"

namespace slipway::app {

struct LocalRunPlan {
    RunConfig config;    // as it will be run: absolute paths
    QString run_dir;     // <runs dir>/<name>-<time>
    QString run_json;    // <run_dir>/run.json, the file the engine reads
    QString mllog_path;  // <output_dir>/mllog.txt
    QString engine;      // the slipway-engine binary
    QStringList arguments;
};

// Resolves paths, writes run.json and chooses the command. `overrides` are HF-style flags appended to the
// engine's command line (tests use --max_steps). Fails when there is no engine or run.json cannot be written.
Result<LocalRunPlan> plan_local_run(const RunConfig& config, const QString& resource_root,
                                    const QString& runs_dir, const QString& engine,
                                    const QStringList& overrides = {});

// Runs one plan. Signals arrive on the thread that owns the object (the GUI): QProcess is asynchronous.
class LocalRunner : public QObject {
    Q_OBJECT

public:
    explicit LocalRunner(QObject* parent = nullptr);
    ~LocalRunner() override;

    void start(const LocalRunPlan& plan);
    // Asks the engine to stop (SIGTERM), and kills it if it has not exited 10 s later.
    void cancel();
    bool running() const { return process_->state() != QProcess::NotRunning; }
    qint64 pid() const { return process_->processId(); }
    const LocalRunPlan& plan() const { return plan_; }

signals:
    void started(qint64 pid);
    void output(const QString& text);  // stdout/stderr text as it comes (progress lines)
    // exit_code -1: the process could not start or crashed; cancelled: cancel() was asked first.
    void finished(int exit_code, bool cancelled, const QString& error);

private:
    QProcess* process_;
    LocalRunPlan plan_;
    bool cancelled_ = false;
    bool reported_ = false;
};

}  // namespace slipway::app
