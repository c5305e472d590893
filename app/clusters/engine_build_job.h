// Building (or finding) a cluster's engine from the Clusters page, off the GUI thread (a ClusterJob: its own
// SSH session and worker thread): the bundle this app carries is uploaded once, a build job is queued in the
// run's environment unless an engine of this bundle is there already, and the build job's state and log
// lines stream to the page while it compiles. stop() cancels the build job.
#pragma once

#include <optional>

#include "clusters/cluster_job.h"
#include "contract/run_config.h"
#include "remote/deploy/engine_build.h"

namespace slipway::app {

class EngineBuildJob : public ClusterJob {
    Q_OBJECT

public:
    using ClusterJob::ClusterJob;

    // Builds or finds the engine for `config`'s environment from `bundle`; output() and then finished()
    // follow on this object's thread. `poll`: how often Slurm and the build log are asked.
    void start(RunConfig config, remote::EngineBundle bundle,
               std::chrono::milliseconds poll = std::chrono::seconds(2));
    // Where the engine is, once finished() said ok; `cached()` when no build was needed.
    const std::optional<remote::EnginePlace>& place() const { return place_; }

private:
    std::optional<remote::EnginePlace> place_;  // written by the worker before finished() is queued
};

}  // namespace slipway::app
