// One `slipway doctor` run from the Clusters page, off the GUI thread (a ClusterJob: its own SSH session and
// worker thread): doctor_on_session (cluster_doctor.h) with the view's options, its progress lines streamed,
// the report saved by it and handed to the page. stop() cancels the Slurm job (run_doctor's cancel path) and
// ends without a report.
#pragma once

#include <optional>

#include "clusters/cluster_doctor.h"
#include "clusters/cluster_job.h"
#include "remote/slurm/doctor_report.h"

namespace slipway::app {

class DoctorJob : public ClusterJob {
    Q_OBJECT

public:
    using ClusterJob::ClusterJob;

    // Runs the doctor once; output() and then finished() follow on this object's thread.
    void start(DoctorOptions options);
    // The judged report, once finished() said ok.
    const std::optional<remote::DoctorReport>& report() const { return report_; }

private:
    std::optional<remote::DoctorReport> report_;  // written by the worker before finished() is queued
};

}  // namespace slipway::app
