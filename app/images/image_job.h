// One image build or import on a cluster, off the GUI thread (a ClusterJob: its own SSH session and worker
// thread): runs the ImageTask the CLI runs too, its output streamed to the Container page. Destroying a
// running job stops following it; the build itself goes on, detached, on the host.
#pragma once

#include "clusters/cluster_job.h"
#include "images/image_tasks.h"

namespace slipway::app {

class ImageJob : public ClusterJob {
    Q_OBJECT

public:
    using ClusterJob::ClusterJob;

    // Runs `task` once; output() and then finished() follow on this object's thread.
    void start(ImageTask task);
};

}  // namespace slipway::app
