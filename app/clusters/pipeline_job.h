// A pipeline submitted to a cluster from the Adaptation page, off the GUI thread (a ClusterJob: its own SSH
// session and worker thread): the run service's submit_pipeline (service/slurm_pipeline.h), the same as
// `slipway submit PIPELINE.json`, in-process. Each step is handed to the page the moment Slurm queued it
// (step_queued), its row already written in the run history on the worker's own connection. stop() between
// steps takes back the jobs already queued.
#pragma once

#include <QString>

#include "clusters/cluster_job.h"
#include "contract/pipeline.h"
#include "service/slurm_pipeline.h"

namespace slipway::app {

class PipelineJob : public ClusterJob {
    Q_OBJECT

public:
    using ClusterJob::ClusterJob;

    // Submits once; step_queued for each step, output() lines, then finished() follow on this object's
    // thread. `store_path`: the run history the steps' rows go to (empty: none).
    void start(Pipeline pipeline, PipelineSubmitRequest request, QString store_path);

signals:
    void step_queued(const slipway::app::QueuedStep& step);
};

// "[2/5] embeddings (train): job 101 after 100, run ruadapt.embeddings-20261127-...": a queued step.
QString describe_queued_step(const QueuedStep& step, size_t steps);

}  // namespace slipway::app
