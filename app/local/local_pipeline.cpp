// A pipeline run on This computer, step by step (see local_pipeline.h).
#include "local/local_pipeline.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QProcess>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "core/install_paths.h"
#include "history/run_history.h"
#include "local/local_run.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Waits for the step's process; a stop request kills it. Its exit code, -1 when it did not start or
// crashed (or was stopped).
int wait_for_step(QProcess& process, const std::function<bool()>& stop_requested, bool& stopped) {
    if (!process.waitForStarted(30000)) return -1;
    while (!process.waitForFinished(200)) {
        if (process.state() == QProcess::NotRunning) break;
        if (stop_requested && stop_requested()) {
            stopped = true;
            process.kill();
            process.waitForFinished(5000);
            return -1;
        }
    }
    return process.exitStatus() == QProcess::CrashExit ? -1 : process.exitCode();
}

std::string one_decimal(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return text;
}

}  // namespace

std::string pipeline_input_root(const Pipeline& pipeline, const std::string& file, const std::string& given) {
    if (!given.empty()) return given;
    const std::string root = resource_root();
    const fs::path here = fs::absolute(fs::path(file)).parent_path();
    for (const auto& [name, value] : pipeline.vars) {
        if (value.empty() || value[0] == '/' || value.find("${") != std::string::npos) continue;
        std::error_code ec;
        if (fs::exists(here / value, ec)) return here.string();
        if (!root.empty() && fs::exists(fs::path(root) / value, ec)) return root;
    }
    return root.empty() ? fs::current_path().string() : root;
}

std::string describe_pipeline_event(const LocalPipelineEvent& e) {
    switch (e.kind) {
        case LocalPipelineEvent::Kind::kStarted:
            return "pipeline " + e.pipeline + ": " + std::to_string(e.steps) + " steps in " + e.run_dir;
        case LocalPipelineEvent::Kind::kStepStarted:
            return "[" + std::to_string(e.step + 1) + "/" + std::to_string(e.steps) + "] " + e.name + " (" +
                   e.step_kind + "): " + e.command;
        case LocalPipelineEvent::Kind::kStepFinished:
            return e.exit_code == 0 ? "    done in " + one_decimal(e.seconds) + " s; out " + e.out
                                    : std::string();
    }
    return {};
}

std::string describe_pipeline_completion(const std::string& name, const LocalPipelineOutcome& outcome) {
    return "pipeline " + name + " completed in " + one_decimal(outcome.seconds) + " s: " + outcome.run_dir;
}

Result<LocalPipelineOutcome> run_local_pipeline(
    const Pipeline& p, const LocalPipelineOptions& options,
    const std::function<void(const LocalPipelineEvent&)>& on_event) {
    const auto emit_event = [&](LocalPipelineEvent e) {
        e.pipeline = p.name;
        e.steps = p.steps.size();
        if (on_event) on_event(e);
    };
    const QString stamp = QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    const QString run_dir =
        QDir(options.runs_dir).absoluteFilePath(QString::fromStdString(p.name) + "-" + stamp);
    if (!QDir().mkpath(run_dir + "/steps")) return Status::Error("cannot create " + run_dir.toStdString());
    LocalPipelineOutcome outcome;
    outcome.run_dir = run_dir.toStdString();
    LocalPipelineEvent started;
    started.run_dir = outcome.run_dir;
    emit_event(started);

    StepContext context;
    context.run_dir = outcome.run_dir;
    context.input = [&](const std::string&, const std::string& path) -> Result<std::string> {
        return (fs::path(options.input_root) / path).lexically_normal().string();
    };
    const auto pipeline_start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < p.steps.size(); ++i) {
        const PipelineStep& step = p.steps[i];
        const std::string where =
            "pipeline " + p.name + " stopped at step " + std::to_string(i) + " \"" + step.name + "\"";
        const auto start = std::chrono::steady_clock::now();
        const QString step_dir = run_dir + "/steps/" + QString::fromStdString(step.name);
        QDir().mkpath(step_dir);
        const QString log = step_dir + "/engine.log";
        Result<ResolvedStep> r = resolve_step(p, i, context);
        if (!r.ok()) return Status::Error(where + ": " + r.error());
        QStringList arguments;
        RunRecord row;
        row.name = QString::fromStdString(p.name + "." + step.name);
        row.cluster = kLocalProfile;
        row.state = RunState::kRunning;
        row.started = QDateTime::currentDateTime();
        row.log_path = log;
        if (r->config) {
            // A training step is an ordinary local run: its run.json, its output folder, its mllog.
            Result<LocalRunPlan> plan = plan_local_run(*r->config, QString::fromStdString(options.input_root),
                                                       step_dir, options.engine);
            if (!plan.ok()) return Status::Error("step \"" + step.name + "\": " + plan.error());
            arguments = plan->arguments;
            r->out = plan->config.training.output_dir;
            row.config_json = QString::fromStdString(to_json(plan->config).dump(2));
            row.log_path = plan->mllog_path;
        } else {
            for (const std::string& a : r->engine_args)
                arguments << QString::fromStdString(a);
            row.config_json = QString::fromStdString(step.spec.dump(2));
            if (!r->out.empty()) QDir().mkpath(QFileInfo(QString::fromStdString(r->out)).absolutePath());
        }
        LocalPipelineEvent step_started;
        step_started.kind = LocalPipelineEvent::Kind::kStepStarted;
        step_started.step = i;
        step_started.name = step.name;
        step_started.step_kind = step.kind;
        step_started.command = (options.engine + " " + arguments.join(' ')).toStdString();
        step_started.log_path = row.log_path.toStdString();
        step_started.training = r->config.has_value();
        if (options.store != nullptr) {
            if (Result<int64_t> id = options.store->add_run(row); id.ok())
                step_started.store_id = *id;
            else
                step_started.store_problem = id.error();
        }
        emit_event(step_started);

        QProcess process;
        process.setWorkingDirectory(step_dir);
        if (!r->stdout_file.empty()) {
            process.setStandardOutputFile(QString::fromStdString(r->stdout_file));
            process.setStandardErrorFile(log);
        } else {
            process.setProcessChannelMode(QProcess::MergedChannels);
            process.setStandardOutputFile(log);
        }
        process.start(options.engine, arguments);
        bool stopped = false;
        const int code = wait_for_step(process, options.stop_requested, stopped);
        LocalPipelineEvent finished;
        if (step_started.store_id != 0) {
            const RunState state =
                code == 0 ? RunState::kCompleted : (stopped ? RunState::kCancelled : RunState::kFailed);
            const QString detail =
                stopped ? QStringLiteral("stopped") : QStringLiteral("exit code %1").arg(code);
            if (Status s = options.store->set_state(step_started.store_id, state, detail, {},
                                                    QDateTime::currentDateTime());
                !s.ok())
                finished.store_problem = s.message();
        }
        finished.kind = LocalPipelineEvent::Kind::kStepFinished;
        finished.step = i;
        finished.name = step.name;
        finished.step_kind = step.kind;
        finished.exit_code = code;
        finished.seconds = seconds_since(start);
        finished.out = r->out;
        finished.log_path = log.toStdString();
        finished.store_id = step_started.store_id;
        emit_event(finished);
        if (stopped) return Status::Error(where + " (" + step.kind + "): stopped; log " + log.toStdString());
        if (code != 0) {
            const std::string why = process.error() == QProcess::FailedToStart
                                        ? " (" + process.errorString().toStdString() + ")"
                                        : std::string();
            return Status::Error(where + " (" + step.kind + "): exit code " + std::to_string(code) + why +
                                 "; log " + log.toStdString());
        }
        context.outs[step.name] = r->out;
    }
    outcome.seconds = seconds_since(pipeline_start);
    return outcome;
}

}  // namespace slipway::app
