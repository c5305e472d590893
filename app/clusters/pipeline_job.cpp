// PipelineJob: submit_pipeline on a ClusterJob's worker thread (see pipeline_job.h).
#include "clusters/pipeline_job.h"

#include <QMetaObject>

#include <memory>

#include "history/history_run_store.h"
#include "history/run_history.h"

namespace slipway::app {

QString describe_queued_step(const QueuedStep& step, size_t steps) {
    QString line = QStringLiteral("[%1/%2] %3 (%4): job %5")
                       .arg(step.index + 1)
                       .arg(steps)
                       .arg(QString::fromStdString(step.step), QString::fromStdString(step.kind),
                            QString::fromStdString(step.job_id));
    if (!step.after.empty()) line += QStringLiteral(" after ") + QString::fromStdString(step.after);
    return line + QStringLiteral(", run ") + QString::fromStdString(step.run_id);
}

void PipelineJob::start(Pipeline pipeline, PipelineSubmitRequest request, QString store_path) {
    const QString host = QString::fromStdString(profile().host);
    request.stop_requested = [this] { return stop_requested(); };
    request.progress = [this](const std::string& line) { queue_line(line); };
    start_work([host](const QString& error) { return tr("Could not connect to %1: %2").arg(host, error); },
               [this, pipeline = std::move(pipeline), request, store_path](remote::Session& session) -> Done {
                   // This thread's own connection to the history (one connection is used by one thread).
                   std::unique_ptr<RunHistory> history;
                   if (!store_path.isEmpty()) {
                       Result<std::unique_ptr<RunHistory>> opened = RunHistory::open(store_path.toStdString());
                       if (!opened.ok())
                           return {false, tr("Run history: %1").arg(QString::fromStdString(opened.error()))};
                       history = std::move(*opened);
                   }
                   std::unique_ptr<RunStore> store;
                   if (history) store = std::make_unique<HistoryRunStore>(*history);
                   if (!store) return {false, tr("No run history to record the pipeline's steps in")};
                   SlurmExecutor executor(session, profile(), *store);
                   const size_t steps = pipeline.steps.size();
                   Result<SubmittedPipeline> submitted =
                       submit_pipeline(executor, pipeline, request, [this, steps](const QueuedStep& step) {
                           queue_line(describe_queued_step(step, steps).toStdString());
                           if (!step.store_problem.empty()) queue_line("run history: " + step.store_problem);
                           QMetaObject::invokeMethod(
                               this, [this, step] { emit step_queued(step); }, Qt::QueuedConnection);
                       });
                   if (!submitted.ok())
                       return {false, (stop_requested() ? tr("Stopped: %1")
                                                        : tr("Submitting the pipeline failed: %1"))
                                          .arg(QString::fromStdString(submitted.error()))};
                   return {true, tr("Pipeline %1 queued as %2 jobs in %3")
                                     .arg(QString::fromStdString(pipeline.name))
                                     .arg(submitted->steps.size())
                                     .arg(QString::fromStdString(submitted->run_dir))};
               });
}

}  // namespace slipway::app
